"""Validate the answers before cookiecutter writes anything (the rules live in the kit)."""

import json
import sys

from cdk.cli._scaffold import AnswerError, check_answers

answers = json.loads("""{{ cookiecutter | jsonify }}""")
try:
    check_answers(answers)
except AnswerError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(1)
