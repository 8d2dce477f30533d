package web

import "github.com/zrviz/zrviz/player"

// outlineBuildPerPage is what building an outline holds while it runs, per page of the request's
// range and per mode: the lockstep pass's engines keep an undo log of every SIT entry they change
// (one copy per segment per checkpoint generation) and load every segment they touch. Measured
// (docs/reliability.md): 95 MB of heap at the peak for one mode of a million slots whose dnode
// chunks each touch 509 segments (the worst layout we know), 20 MB when each touches 4; reserving
// the worst keeps concurrent builds of crafted runs within the budget instead of growing the server
// by gigabytes (a refused build is a 503 with Retry-After).
const outlineBuildPerPage = 96

// outlineBuildBytes is the budget a build of spec's outline reserves until it ends (the outline it
// leaves is small and is not counted: a viewer's reservation covers what it holds).
func outlineBuildBytes(spec player.Spec) int64 {
	r := player.PagesOf(spec)
	return int64(r.End-r.Start) * int64(len(spec.Modes)) * outlineBuildPerPage
}
