"""The agent-facing instruction (paraphrase of the spec's §3 template, adapted to the
offline runner: the pack images have no asv, so benchmark commands use ``fc_bench.py``,
which reads the same asv-style suite)."""

SENTINEL = "/tmp/fc_session_complete"
BENCH_RUNNER = "/opt/fc_runtime/fc_bench.py"

INSTRUCTION = """# Performance Optimization Task

{problem}

## Environment
The repository is checked out at `/workspace/repo` (a git repository at the base commit;
`git diff fc-base` shows your changes). Python 3 with numpy, scipy, pandas and pytest is
installed; there is no network. The benchmark suite is asv-style (`benchmarks/`, configured
by `asv.conf.json`). Useful commands:
- list the benchmarks: `python3 {runner} list /workspace/repo`
- time every benchmark: `python3 {runner} time /workspace/repo /tmp/times.json --repeat 3`
  (seconds per call, per workload)
- profile: `python3 -m cProfile -s cumtime your_script.py`

## Task requirements
1. Analyse the code base and find the performance bottlenecks the benchmarks exercise.
2. Implement optimisations in the package's source code.
3. Keep every existing test passing (`cd /workspace/repo && python3 -m pytest -q tests`) and
   keep the results the benchmarks return unchanged.
4. Verify the improvement with the benchmarks.

## Evaluation
(1) Functional correctness: the tests must pass and benchmark return values must match.
(2) Performance: the benchmarks are timed on your version against the original and the
maintainers' own optimisation. Benchmark and test files are restored before grading, so
editing them has no effect.

## Termination
When you are done, create the file `{sentinel}` (`touch {sentinel}`) and stop calling tools.
"""


def render(problem: str) -> str:
    """The full instruction for one task's problem statement."""
    return INSTRUCTION.format(problem=problem.strip(), runner=BENCH_RUNNER, sentinel=SENTINEL)
