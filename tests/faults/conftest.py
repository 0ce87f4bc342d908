import json
import os

import report


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    text = report.tables()
    if not text:
        return
    terminalreporter.write_sep("=", "failover figures")
    terminalreporter.write_line(text)
    path = os.environ.get("FAILOVER_REPORT")
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
        with open(path + ".json", "w") as f:  # every run's figures
            json.dump({"failovers": report.FAILOVERS, "costs": report.COSTS, "faults": report.FAULTS,
                       "min_replicas": report.MINREP}, f, indent=1, default=str)
