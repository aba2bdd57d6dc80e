import sys

from schedsearch.shadowing import shadowing_file, shadowing_message

_hidden = shadowing_file()
if _hidden is not None:  # before cli imports models: its error would not say why
    print(f"schedsearch: error: {shadowing_message(_hidden)}", file=sys.stderr)
    sys.exit(2)

from schedsearch.cli import main  # noqa: E402

sys.exit(main())
