from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand, refusals
from judging.models import EvidenceMode
from judging.providers import PROVIDERS
from judging.services.judges.configs import JudgeConfigError, JudgeSettings, judge_config_save


class Command(ProjectCommand):
    help = (
        "Create a judge or save a new version of it (a changed prompt or setting, endpoint "
        "and evidence mode included, is a new version; the same settings again change "
        "nothing). Omit --criterion for a ground-truth reader."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--provider", required=True, choices=sorted(PROVIDERS))
        parser.add_argument("--model", required=True, metavar="M")
        parser.add_argument("--base-url", default="", metavar="URL")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--samples", type=int, default=1)
        parser.add_argument("--criterion", metavar="C")
        parser.add_argument("--prompt-file", required=True, metavar="PATH")
        parser.add_argument(
            "--api-key-env", default="", metavar="VAR", help="the variable holding the key"
        )
        parser.add_argument(
            "--evidence",
            choices=EvidenceMode.values,
            default=EvidenceMode.NONE,
            help="what the model sees besides the text: none, every evidence page as an image "
            "(pages), or only the pages the item's claims cite (cited)",
        )
        parser.add_argument(
            "--max-pages", type=int, default=8, metavar="N", help="evidence pages per call"
        )
        parser.add_argument("--timeout", dest="timeout_seconds", type=int, default=120)
        parser.add_argument("--retries", dest="max_retries", type=int, default=4)
        parser.add_argument(
            "--concurrency", type=int, default=4, metavar="K", help="calls in flight at once"
        )

    def handle_project(self, project, **o):
        try:
            prompt = Path(o["prompt_file"]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{o['prompt_file']}: cannot read the prompt ({exc})") from None
        settings = JudgeSettings.of(o, prompt=prompt)
        with refusals(JudgeConfigError, prefix=f"judge {o['name']!r}: "):
            result = judge_config_save(project=project, name=o["name"], settings=settings)
        version = result.version
        what = "saved new version" if result.created else "unchanged, still"
        self.stdout.write(
            f"{result.config.name}: {what} v{version.number} (prompt sha256 {version.prompt_sha256})"
        )
