import sys

from kcsim.server.cli import main

sys.exit(main())
