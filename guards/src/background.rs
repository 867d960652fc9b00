//! Background priority for helper threads that must never delay the thread running
//! processes (verify's evidence recorder).
//!
//! When a thread hands work to a helper and goes on to spawn the next process, waking the
//! helper can preempt the spawning thread on its CPU: the helper's file writes then sit on
//! the critical path. On Linux the helper is switched to `SCHED_IDLE`, so it runs only on a
//! CPU that has nothing else to do. It still runs to completion: the spawning thread sleeps
//! while each child runs, and whoever waits for the helper at the end leaves its CPU idle.

/// Lower the calling thread to the idlest scheduling class the platform offers. Best
/// effort: returns whether it took effect, and a failure changes nothing else.
pub fn lower_current_thread() -> bool {
    lower()
}

#[cfg(target_os = "linux")]
fn lower() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 names the calling thread; `param` outlives the call, and SCHED_IDLE
    // takes priority 0. No memory is shared with the kernel beyond the call.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn lower() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lowered_thread_is_idle_class_and_others_are_not() {
        let lowered = std::thread::spawn(|| {
            let changed = lower_current_thread();
            // SAFETY: querying the calling thread's policy takes no pointers.
            (changed, unsafe { libc::sched_getscheduler(0) })
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (true, libc::SCHED_IDLE));
        // SAFETY: as above.
        let here = unsafe { libc::sched_getscheduler(0) };
        assert_ne!(here, libc::SCHED_IDLE, "only the calling thread changes");
    }
}
