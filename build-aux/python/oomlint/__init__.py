"""oomlint is a program, not a library: this package only lets `python -m
oomlint` run the oomlint binary that the wheel installed beside it."""
