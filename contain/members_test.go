package contain

import (
	"slices"
	"testing"
)

// TestGroupMembers: the pgroup mechanism's membership decision on staged
// process tables.
func TestGroupMembers(t *testing.T) {
	const self = 100
	main := memberKey{PID: 200, Start: 1000}
	base := []tableEntry{
		{PID: 1, PPID: 0, PGID: 1, Start: 1},           // launchd
		{PID: self, PPID: 1, PGID: self, Start: 900},   // tether
		{PID: 200, PPID: self, PGID: 200, Start: 1000}, // main
		{PID: 201, PPID: 200, PGID: 200, Start: 1001},  // child
		{PID: 202, PPID: 201, PGID: 202, Start: 1002},  // grandchild in a group of its own
		{PID: 300, PPID: 1, PGID: 300, Start: 500},     // unrelated
		{PID: 301, PPID: 300, PGID: 300, Start: 600},   // unrelated child
	}
	pids := func(es []tableEntry) []int {
		var out []int
		for _, e := range es {
			out = append(out, e.PID)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name  string
		snap  []tableEntry
		known []memberKey
		want  []int
	}{
		{"tree", base, nil, []int{200, 201, 202}},
		{"an orphan in the main's group, reparented to launchd",
			append(slices.Clone(base), tableEntry{PID: 203, PPID: 1, PGID: 200, Start: 1003}), nil, []int{200, 201, 202, 203}},
		{"a setsid'd orphan seen before",
			append(slices.Clone(base), tableEntry{PID: 204, PPID: 1, PGID: 204, Start: 1004}), []memberKey{{204, 1004}}, []int{200, 201, 202, 204}},
		{"a setsid'd orphan never seen escapes",
			append(slices.Clone(base), tableEntry{PID: 204, PPID: 1, PGID: 204, Start: 1004}), nil, []int{200, 201, 202}},
		{"a known pid now another process is not a member",
			base, []memberKey{{300, 499}}, []int{200, 201, 202}},
		{"the known member's descendants count",
			append(slices.Clone(base), tableEntry{PID: 204, PPID: 1, PGID: 204, Start: 1004}, tableEntry{PID: 205, PPID: 204, PGID: 204, Start: 1005}),
			[]memberKey{{204, 1004}}, []int{200, 201, 202, 204, 205}},
		{"zombies are not returned, their children are",
			[]tableEntry{{PID: self, PPID: 1, Start: 900}, {PID: 200, PPID: self, PGID: 200, Start: 1000}, {PID: 201, PPID: 200, PGID: 200, Start: 1001, Zombie: true}, {PID: 202, PPID: 201, PGID: 200, Start: 1002}},
			nil, []int{200, 202}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			known := map[memberKey]bool{}
			for _, k := range tc.known {
				known[k] = true
			}
			if got := pids(groupMembers(tc.snap, main, in(known), self)); !slices.Equal(got, tc.want) {
				t.Errorf("members %v, want %v", got, tc.want)
			}
		})
	}

	// After the main exits its pid may be reused: the group's id then
	// names nothing of ours, and a younger process's children are not
	// taken for the old main's.
	gone := []tableEntry{
		{PID: self, PPID: 1, PGID: self, Start: 900},
		{PID: 200, PPID: 1, PGID: 200, Start: 5000},   // a newcomer with the main's pid
		{PID: 210, PPID: 200, PGID: 200, Start: 5001}, // its child, in "group 200"
		{PID: 201, PPID: 1, PGID: 200, Start: 1001},   // the main's orphaned child, seen before
	}
	got := pids(groupMembers(gone, main, in(map[memberKey]bool{{201, 1001}: true}), self))
	if !slices.Equal(got, []int{201}) {
		t.Errorf("after the main's pid was reused: members %v, want only the known orphan [201]", got)
	}
	// A child older than the process its ppid now names is another
	// process's: that parent's pid was reused after it was born.
	reused := []tableEntry{
		{PID: self, PPID: 1, Start: 900},
		{PID: 200, PPID: self, PGID: 200, Start: 1000},
		{PID: 400, PPID: 1, PGID: 400, Start: 1500, Zombie: false}, // known member 400 started at 1100; now reused
		{PID: 401, PPID: 400, PGID: 400, Start: 1200},              // older than the new 400
	}
	if got := pids(groupMembers(reused, main, in(map[memberKey]bool{{400, 1500}: true}), self)); !slices.Equal(got, []int{200, 400}) {
		t.Errorf("a child older than its parent: members %v, want [200 400]", got)
	}
}

// in is membership of m.
func in(m map[memberKey]bool) func(memberKey) bool {
	return func(k memberKey) bool { return m[k] }
}
