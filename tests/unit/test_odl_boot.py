"""Reading an OpenDaylight boot from Karaf's log: ready, failed, progressing, stalled."""

from __future__ import annotations

from sdnbench.controllers.odl_boot import KarafBoot


def diag(elapsed: int, waiting: int, active: int) -> str:
    return (f"2026-11-24T02:55:{elapsed:02d},000 | INFO  | awaitility[checkBundleDiagInfos] | KarafSystemReady | 211 - "
            f"ready-impl | checkBundleDiagInfos: Elapsed time {elapsed}s, remaining time {299 - elapsed}s, diag: "
            f"Booting {{INSTALLED=0, RESOLVED=28, WAITING={waiting}, ACTIVE={active}, FAILURE=0}}\n")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progressing_boot_is_booting_until_system_ready(tmp_path):
    log, clock = tmp_path / "karaf.log", Clock()
    boot = KarafBoot(log, stall_s=60, clock=clock)
    assert boot.state() == "booting"            # no log yet
    for second in range(0, 200, 10):
        clock.now = second
        with log.open("a") as f:
            f.write(diag(second % 60, waiting=5, active=300 + second))   # counts change: progress
        assert boot.state() == "booting"
    with log.open("a") as f:
        f.write("... | SimpleSystemReadyMonitor | System ready; AKA: Aye captain\n")
    assert boot.state() == "ready"


def test_counts_unchanged_for_the_stall_time_is_a_stall(tmp_path):
    log, clock = tmp_path / "karaf.log", Clock()
    boot = KarafBoot(log, stall_s=60, clock=clock)
    log.write_text(diag(1, waiting=5, active=328))
    assert boot.state() == "booting"
    for second in range(2, 60):
        clock.now = second
        with log.open("a") as f:
            f.write(diag(second % 60, waiting=5, active=328))       # the elapsed time alone changes
        assert boot.state() == "booting"
    clock.now = 60
    assert boot.state() == "stalled"


def test_readiness_check_failure_is_failed(tmp_path):
    log = tmp_path / "karaf.log"
    log.write_text(diag(3, 1, 2) + "x | ERROR | TestBundleDiag | diag failure; BundleService reports ...\n")
    assert KarafBoot(log).state() == "failed"


def test_diagnosis_leads_with_the_first_errors_and_the_last_diagnosis(tmp_path):
    log = tmp_path / "karaf.log"
    lines = ["a | ERROR | H2Store | Constructor argument 0 has unsupported type\n",
             diag(5, 5, 300), diag(6, 4, 301),
             "b | INFO | Blueprint bundle org.opendaylight.aaa.shiro is waiting for dependencies [X]\n"]
    lines += [f"c | ERROR | shutdown error {i}\n" for i in range(10)]
    log.write_text("".join(lines))
    text = KarafBoot(log).diagnosis(errors=3).splitlines()
    assert text[0].endswith("unsupported type") and "shutdown error 1" in text[2]
    assert "WAITING=4" in text[3] and "waiting for dependencies" in text[4]
