"""The site's settings with MD5 password hashing, for tests that run the site in processes of
its own (the suite's `_fast_passwords` fixture cannot reach them): PBKDF2's 1M iterations cost
about a second of CPU per login on a shared machine, which is not what those tests measure."""

from evalsite.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
