"""The hostile test suite (issue 12): the site tried as an attacker, a typo or a broken client would.

Run with the rest (`make test`), on PostgreSQL and Redis in CI. What each file holds:
- test_access: CSRF on every POST, another learner's ids, another course's instructor, roles
  (routes walked from the URLconf by urlwalk, so a new URL is covered the day it is added);
- test_get_safety: no GET over the whole URLconf writes a row or answers 500, for five visitors;
- test_injection: stored and reflected script payloads escaped, CSV cells never a formula;
- test_signed_links: tampered, forged, replayed and expired email links;
- test_admin_login: the admin behind the site's login and its rate limit;
- test_conflict_of_interest: nobody grades their own capstone;
- test_rubric, test_learner_forms, test_lesson_visit: the issue's other defects, one test each;
- test_settings, test_import_numbers, test_cli: DEBUG and the secret, content and CLI numbers;
- test_fuzz_*: hypothesis over every numeric field of every endpoint, command and content file
  (fuzz.py: the hostile values, the answer bound, the no-write check): no 500, no traceback,
  no write when refused, each answer within a bound.
"""
