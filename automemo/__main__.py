import sys

from automemo.cli import main

sys.exit(main())
