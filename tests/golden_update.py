"""`make golden`: regenerate every golden file from specs/."""

from tests.golden import main

main()
