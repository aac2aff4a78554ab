"""`make golden`: regenerate every golden file from specs/, and the `lint --fix` golden
files of tests/lint/fixtures/fix/."""

from tests.golden import main
from tests.lint import fix_golden

main()
fix_golden.main()
