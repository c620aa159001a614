package reap

// deadEmptyPlan is the plan for a record whose supervisor and main
// process are gone: what the main process started cannot be proven.
const deadEmptyPlan = "clean the record and runtime dir: its supervisor and main process are gone (what the main process started cannot be proven, and is left alone)"
