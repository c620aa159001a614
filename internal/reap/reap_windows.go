package reap

// deadEmptyPlan is the plan for a record whose supervisor and main
// process are gone.
const deadEmptyPlan = "clean the record and runtime dir: its job died with its supervisor (KILL_ON_JOB_CLOSE)"
