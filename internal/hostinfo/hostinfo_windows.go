package hostinfo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/budget"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/limits"
)

// probe examines what Windows offers tether's Job Objects: whether tether
// itself is in a job and may let children break away from it, whether a
// process can be created in a fresh job and stopped (a contained run of
// cmd /c exit 0), and which limits a job keeps (set on an empty job and
// read back). Nothing is left behind: the run's job is
// closed, the probe job too.
func probe(o Options) (Report, error) {
	r := newReport("windows")
	r.Supported = true
	v := windows.RtlGetVersion()
	j := &Job{Windows: fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber), Wine: hooks.WineVersion()}
	r.Kernel = j.Windows
	r.Job = j
	j.InJob = hooks.InJob()
	// The probes run the command interpreter, which every Windows has:
	// cmd /c exit 0.
	exe := os.Getenv("ComSpec")
	if exe == "" {
		exe = `C:\Windows\System32\cmd.exe`
	}
	{
		c := contain.Command(exe, "/c", "exit", "0")
		err := c.Run()
		rc := c.Receipt()
		switch {
		case err != nil:
			j.CreateInJob = Feature{Probed: true, Detail: "a contained run of " + exe + " /c exit 0 failed: " + err.Error()}
		case !rc.StopConfirmed || rc.Job == nil:
			j.CreateInJob = Feature{Probed: true, Detail: "the run's stop was not confirmed"}
		default:
			j.CreateInJob = Feature{Available: true, Probed: true, Detail: fmt.Sprintf("a process created in a fresh job (nested in tether's: %t) and its stop confirmed by the job's accounting", rc.Job.Nested)}
		}
	}

	switch {
	case !j.InJob:
		j.Breakaway = Feature{Available: true, Probed: false, Detail: "tether is in no job: there is nothing to break away from"}
	default:
		c := exec.Command(exe, "/c", "exit", "0")
		c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB}
		err := c.Run()
		switch {
		case err == nil:
			j.Breakaway = Feature{Available: true, Probed: true, Detail: "a child was created out of tether's job: sessions outlive it"}
		case errors.Is(err, windows.ERROR_ACCESS_DENIED):
			j.Breakaway = Feature{Probed: true, Detail: "tether's job forbids breakaway (no JOB_OBJECT_LIMIT_BREAKAWAY_OK): a session started here runs inside that job and ends with it"}
		default:
			j.Breakaway = Feature{Probed: true, Detail: "the probe failed: " + err.Error()}
		}
	}

	r.Limits = jobLimits()
	r.Mechanism = Mechanism{Default: MechanismJobObject, Why: "tether run creates the command in a Job Object of its own (PROC_THREAD_ATTRIBUTE_JOB_LIST) with KILL_ON_JOB_CLOSE and breakaway denied"}
	if !j.CreateInJob.Available {
		r.Mechanism = Mechanism{Default: MechanismError, Why: "a process could not be created in a fresh job: " + j.CreateInJob.Detail}
	}
	r.FullContainment = j.CreateInJob.Available
	r.Advice = windowsAdvice(&r)
	return r, nil
}

// jobLimits sets a budget on an empty job and reads it back: a limit the
// job keeps is enforced there, one it refuses or drops is unavailable.
func jobLimits() []Limit {
	unavailable := func(why string) []Limit {
		var out []Limit
		for _, c := range LimitControllers {
			out = append(out, Limit{Controller: c, Where: WhereUnavailable, Why: why})
		}
		return out
	}
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return unavailable("CreateJobObject: " + err.Error())
	}
	defer windows.CloseHandle(h)
	b, err := budget.ForJob(limits.Spec{Memory: 64 << 20, Pids: 16, CPUs: 0.5}, budget.HostCPUs(), true)
	if err == nil {
		err = b.Apply(h, windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
	}
	if err != nil {
		return unavailable(err.Error())
	}
	rec := b.Receipt()
	byName := map[string]Limit{}
	for _, a := range rec.Applied {
		byName[a.Name] = Limit{Where: WhereJob, Dir: a.File, Why: a.Note}
	}
	for _, u := range rec.NotApplied {
		byName[u.Name] = Limit{Where: WhereUnavailable, Why: u.Reason}
	}
	var out []Limit
	for _, c := range LimitControllers {
		name := c
		if c == "cpu" {
			name = "cpus"
		}
		l := byName[name]
		l.Controller = c
		out = append(out, l)
	}
	return out
}

// windowsAdvice says what the findings mean for tether run and sessions.
func windowsAdvice(r *Report) []string {
	j := r.Job
	var a []string
	if j.Wine != "" {
		a = append(a, "this is Wine "+j.Wine+", not Windows: job membership, breakaway denial, KILL_ON_JOB_CLOSE and TerminateJobObject behave as Windows documents, but no job limit is kept; claim limits on a real Windows machine")
	}
	if j.InJob && !j.Breakaway.Available && j.Breakaway.Probed {
		a = append(a, "sessions started here end with tether's job: start them from a shell outside it, or give that job JOB_OBJECT_LIMIT_BREAKAWAY_OK")
	}
	for _, l := range r.Limits {
		if l.Where == WhereUnavailable && j.Wine == "" {
			a = append(a, "the "+l.Controller+" limit is not kept by this system's jobs: --limits best-effort runs without it")
		}
	}
	if !j.CreateInJob.Available {
		a = append(a, "tether run cannot contain anything here: "+j.CreateInJob.Detail)
	}
	if len(a) == 0 {
		a = append(a, "nothing to do: tether run and sessions have full containment here")
	}
	return a
}
