package result

// Generator is what openload itself used while it ran, sampled by the
// engine: if the generator was short of CPU or paused for GC, requests
// left late for reasons of its own and the run understates latency
// (verify warns).
type Generator struct {
	// GOMAXPROCS is the number of cores the Go runtime could use.
	GOMAXPROCS int `json:"gomaxprocs"`
	// WallSeconds is the span sampled, from the run's start to its end.
	WallSeconds float64 `json:"wall_seconds"`
	// CPUSeconds is the process's CPU time (user + system) over the run;
	// 0 where the platform does not report it (CPUKnown false).
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUKnown   bool    `json:"cpu_known"`
	// CPUShare = CPUSeconds ÷ (WallSeconds × GOMAXPROCS): the share of the
	// cores available to openload that it used. PeakCPUShare is the same
	// over the busiest whole second.
	CPUShare     float64 `json:"cpu_share_of_available"`
	PeakCPUShare float64 `json:"peak_cpu_share_1s"`
	// LoopBusy is the share of the run's wall time that the epoll client's
	// event loop spent working rather than waiting for events, and
	// PeakLoopBusy the same over the busiest whole second; both 0 on the
	// other clients. The loop is one goroutine: it is saturated when it is
	// always busy, even with the process at half its cores.
	LoopBusy     float64 `json:"loop_busy,omitempty"`
	PeakLoopBusy float64 `json:"peak_loop_busy_1s,omitempty"`
	// LoopSliceUS is the scheduler slice, in µs, that the event loop's
	// thread asked the kernel for and got (0: the kernel's default).
	LoopSliceUS int `json:"loop_slice_us,omitempty"`
	// GCCycles is the number of garbage collections completed during the
	// run; GCPauseP99 and GCPauseMax summarise their stop-the-world
	// pauses (upper bounds of the runtime's histogram buckets), in ms.
	GCCycles   uint64  `json:"gc_cycles"`
	GCPauseP99 float64 `json:"gc_pause_p99_ms"`
	GCPauseMax float64 `json:"gc_pause_max_ms"`
	// MaxRSSMB is the process's peak resident set size so far, in MiB
	// (0 where unknown).
	MaxRSSMB float64 `json:"max_rss_mb,omitempty"`
}
