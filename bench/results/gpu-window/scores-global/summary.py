# This folder's A/B tables: ../ab_summary.py (same arguments), kept here for the calls' run.sh.
import os, runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ab_summary.py"), run_name="__main__")
