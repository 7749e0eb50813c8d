//! `event=cpu`: how many intervals a sample stands for, from the thread's
//! own CPU clock rather than the kernel's count of expirations.
//!
//! Why: on a loaded machine the kernel's thread CPU timers lose
//! expirations that the signal's overrun count does not report. Measured
//! on this project's 2-vCPU VM (Linux 6.18) with ten CPU burners, in C,
//! no JVM: a thread that used 900 ms of CPU got 54 to 75 signals for 90
//! intervals, overruns included. The handler reads the thread's CPU clock
//! as it finishes (`Sample::cpu_ns`), so each sample is credited with the
//! whole intervals of CPU the thread used since its previous sample (or
//! since its timer was armed), the remainder carried to the next: a
//! thread's samples add up to its CPU time under a running timer, late or
//! lost signals or not. What each sample's stack gets is what an overrun
//! gave it before: the intervals that passed while it was running.

/// One thread's CPU already credited.
#[derive(Default)]
pub(super) struct CpuCredit {
    /// The thread's CPU clock at its last sample, or at its timer's arming
    /// (ns; `None`: not known yet).
    mark: Option<u64>,
    /// CPU past the mark's whole intervals, not yet credited (ns).
    carry: u64,
}

impl CpuCredit {
    /// A timer was armed when the thread's CPU clock read `cpu_ns` (a timer
    /// armed anew: what ran while none was armed is not credited; `None`:
    /// nothing is credited from the clock until a sample sets the mark).
    pub(super) fn armed(&mut self, cpu_ns: Option<u64>) {
        self.mark = cpu_ns;
        self.carry = 0;
    }

    /// A timer whose arming read `cpu_ns` was taken into the thread's
    /// state, perhaps after some of its samples: the mark only if none.
    pub(super) fn armed_earlier(&mut self, cpu_ns: Option<u64>) {
        if self.mark.is_none() {
            self.armed(cpu_ns);
        }
    }

    /// Whether the mark is known (else [`CpuCredit::armed_earlier`] may tell it).
    pub(super) fn known(&self) -> bool {
        self.mark.is_some()
    }

    /// The intervals a sample that read `cpu_ns` stands for; `signalled`:
    /// the kernel's count (1 + overrun), used when the clock or the mark
    /// is unknown.
    pub(super) fn weigh(&mut self, cpu_ns: u64, signalled: u64, interval_ns: u64) -> u64 {
        let interval_ns = interval_ns.max(1);
        match self.mark {
            Some(mark) if cpu_ns >= mark && cpu_ns > 0 => {
                let owed = cpu_ns - mark + self.carry;
                self.mark = Some(cpu_ns);
                self.carry = owed % interval_ns;
                owed / interval_ns
            }
            // A late signal of a timer deleted before the mark was set (the
            // thread's timer was made again): the kernel's count, the mark
            // kept (moving it back would credit that CPU twice).
            Some(_) => signalled,
            None => {
                if cpu_ns > 0 {
                    self.mark = Some(cpu_ns);
                    self.carry = 0;
                }
                signalled
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn samples_add_up_to_the_cpu_used_whatever_the_signals_lost() {
        let mut c = CpuCredit::default();
        c.armed(Some(5 * MS));
        // Signals at 15, 25.1, 65.2 (three lost), 75.3 ms of CPU.
        let w: Vec<u64> = [
            15 * MS,
            25 * MS + MS / 10,
            65 * MS + MS / 5,
            75 * MS + 3 * MS / 10,
        ]
        .iter()
        .map(|&cpu| c.weigh(cpu, 1, 10 * MS))
        .collect();
        assert_eq!(w, [1, 1, 4, 1]);
        assert_eq!(w.iter().sum::<u64>(), (75 * MS - 5 * MS) / (10 * MS));
    }

    #[test]
    fn the_remainder_is_carried_not_lost() {
        let mut c = CpuCredit::default();
        c.armed(Some(0));
        // Signals late by 4 ms each time: 14, 28, 42 ms: 4 intervals in all.
        let w: Vec<u64> = [14, 28, 42]
            .iter()
            .map(|&ms| c.weigh(ms * MS, 1, 10 * MS))
            .collect();
        assert_eq!(w, [1, 1, 2]);
    }

    #[test]
    fn without_a_mark_the_kernels_count_then_the_clock() {
        let mut c = CpuCredit::default();
        assert!(!c.known());
        assert_eq!(c.weigh(30 * MS, 2, 10 * MS), 2);
        c.armed_earlier(Some(0)); // after a sample: kept as it is
        assert_eq!(c.weigh(50 * MS, 1, 10 * MS), 2);
        // A clock that could not be read (0): the kernel's count.
        assert_eq!(c.weigh(0, 1, 10 * MS), 1);
    }

    #[test]
    fn a_late_signal_of_an_earlier_timer_does_not_move_the_mark_back() {
        let mut c = CpuCredit::default();
        c.armed(Some(500 * MS));
        assert_eq!(c.weigh(495 * MS, 1, 10 * MS), 1);
        assert_eq!(c.weigh(510 * MS, 1, 10 * MS), 1);
    }

    #[test]
    fn a_timer_armed_anew_credits_nothing_from_before() {
        let mut c = CpuCredit::default();
        c.armed(Some(0));
        assert_eq!(c.weigh(10 * MS, 1, 10 * MS), 1);
        c.armed(Some(500 * MS)); // stopped, resumed
        assert_eq!(c.weigh(510 * MS, 1, 10 * MS), 1);
    }
}
