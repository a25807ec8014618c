"""`shapescript` installed by pip: runs the C++ command-line tool bundled in this package."""
import os
import sys


def main() -> None:
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "shapescript")
    if not os.path.exists(binary):
        sys.exit(f"error: the shapescript binary is missing from {os.path.dirname(binary)}; reinstall the package")
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
