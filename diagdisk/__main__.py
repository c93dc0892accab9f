"""`python -m diagdisk` and the installed `diagdisk` command."""

import sys


def run() -> None:
    try:
        from .cli.main import main
    except KeyboardInterrupt:  # Ctrl-C while the command line is still loading: no traceback
        sys.stderr.write("diagdisk: interrupted\n")
        raise SystemExit(130) from None
    main()


if __name__ == "__main__":
    run()
