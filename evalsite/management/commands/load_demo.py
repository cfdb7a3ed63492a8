from django.core.management.base import BaseCommand
from django.db import transaction

from judging import demo as judging_demo
from reviews.demo.load import DEMO_USERS, demo_load, demo_project
from reviews.models import Project


class Command(BaseCommand):
    help = "Load the demo projects and users (idempotent); prints the demo logins."

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="load only when the database has no project yet (`make run` uses this)",
        )

    def handle(self, *args, if_empty, **options):
        if if_empty and Project.objects.exists():
            self.stdout.write("database has projects already: demo not reloaded")
        else:
            with transaction.atomic():
                review_demo, users = demo_load()
                judge_demo = judging_demo.demo_judging_load(
                    demo_project(users, slug=judging_demo.SLUG, name=judging_demo.NAME),
                    users=users,
                )
            for project in (review_demo, judge_demo):
                self.stdout.write(f"demo project {project.slug!r}: {project.items.count()} items")
        self.stdout.write("demo logins (username / password / roles):")
        for spec in DEMO_USERS:
            self.stdout.write(f"  {spec.username:<7} {spec.password:<17} {spec.described}")
