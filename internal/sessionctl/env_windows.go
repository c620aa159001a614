package sessionctl

// ReadyEnv names, in the supervisor's environment, the inherited handle of
// its report pipe.
const ReadyEnv = "TETHER_READY_HANDLE"

// CallerJobEnv tells a supervisor that it was started inside its
// caller's job.
const CallerJobEnv = "TETHER_IN_CALLER_JOB"
