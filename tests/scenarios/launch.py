"""launch.py -- start torch.distributed.run (torchrun) with Debian torch 1.13's option bug fixed.

On Python 3.11, torch 1.13's Std.from_str() iterates an IntFlag, which skips NONE (0) and the
composite ALL (3), so `--redirects`/`--tee` of 0 or 3 (and the defaults) turn into None and the
launcher dies in to_map(). This wrapper backports the parsing (torch 2.0's fix) and then calls
torch.distributed.run.main() with the same arguments. Used only by the scenario harness.
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api as _api


def _from_str(cls, vm):
    vm = vm.strip()
    if re.fullmatch(r"[0-3]", vm):
        return cls(int(vm))
    if re.fullmatch(r"(\d:[0-3],)*\d:[0-3]", vm):
        return {int(k): cls(int(v)) for k, v in (p.split(":") for p in vm.split(","))}
    raise ValueError(f"{vm} does not match: {_api._VALUE_REGEX} or {_api._MAPPING_REGEX}")


_api.Std.from_str = classmethod(_from_str)

from torch.distributed.run import main  # noqa: E402  (after the patch on purpose)

if __name__ == "__main__":
    sys.argv[0] = "torchrun"
    main()
