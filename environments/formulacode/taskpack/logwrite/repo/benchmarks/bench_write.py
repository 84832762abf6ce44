import os
import shutil
import tempfile

from eventlog import write_events

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


def _events(n, msg_len):
    return [(1_700_000_000 + i * 0.001, LEVELS[i % 4], f"m{i}-".ljust(msg_len, "x"))
            for i in range(n)]


class Write:
    params = [[10, 200, 2_000], [16, 256, 4_096], ["text", "csv"]]
    param_names = ["n_events", "msg_len", "fmt"]
    warmup_time = 0.02

    def setup(self, n_events, msg_len, fmt):
        self.dir = tempfile.mkdtemp(prefix="fc-log-")
        self.path = os.path.join(self.dir, "events.log")
        self.events = _events(n_events, msg_len)

    def teardown(self, n_events, msg_len, fmt):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_write_events(self, n_events, msg_len, fmt):
        return write_events(self.path, self.events, fmt)


class WriteLarge:
    params = [[4, 16], [100_000, 300_000]]
    param_names = ["n_events", "msg_len"]
    warmup_time = 0.02

    def setup(self, n_events, msg_len):
        self.dir = tempfile.mkdtemp(prefix="fc-log-")
        self.path = os.path.join(self.dir, "events.log")
        self.events = _events(n_events, msg_len)

    def teardown(self, n_events, msg_len):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_write_events(self, n_events, msg_len):
        return write_events(self.path, self.events)
