package templates

// GCPage is the "what happens next" page (/images/{id}/next): the state a fresh mount of the image
// reaches after the ops in the URL (package gc: checkpoint, gc 1, gc 0 as Linux 6.12 picks), the
// last op's result with its ranked candidates, and links that add an op or go back to an earlier
// step. Every step is its own URL, so any path to it is a fresh load.
type GCPage struct {
	Layout
	ID         string
	Now        uint64
	SegsPerSec uint32
	Steps      []GCStep // the ops so far; the last is the one shown
	Last       *GCResult
	Cells      []GCCell
	Counts     []KV     // segments per class after the ops
	Next       []GCLink // add checkpoint, gc 1, gc 0
	StartHref  string   // no ops: the image as mounted
	// Quiz (&quiz=1) asks before it shows: the last gc call's result, its candidates' ranking and
	// the victim stay hidden until a guess (&guess=SEGNO) is made from Options (the candidates in
	// segment order).
	Quiz    bool
	Asking  bool // a question is open: no guess yet
	Options []GCLink
	// Terms are what the policy weighs for each candidate, in segment order, while a question is
	// open: valid blocks (and u) for greedy; valid blocks, u, mean mtime and age for cost-benefit.
	// The answer follows from them as the kernel computes it; the cost and rank are withheld.
	Terms       []GCCandidate
	CostBenefit bool   // the asked call's policy weighs age: the terms show mtime and age
	Verdict     string // after a guess: right or wrong, and the kernel's pick
	QuizHref    string // toggles the quiz
}

// GCStep is one op of the URL, with the URL that ends at it.
type GCStep struct {
	Label string
	Href  string
	Here  bool
}

// GCLink is a link that adds an op.
type GCLink struct {
	Label, Title, Href, TestID string
}

// GCResult is what the last op did: a gc call's pick or a checkpoint.
type GCResult struct {
	Op         string // "gc 1", "checkpoint", ...
	Summary    string
	Victim     int64 // -1: none
	Candidates []GCCandidate
	Policy     string
}

// GCCandidate is one ranked section with its cost terms.
type GCCandidate struct {
	Segno, Valid, U, Age, Cost string
	Mtime                      string
	Chosen                     bool
}

// GCCell is one segment of the map.
type GCCell struct {
	Segno  uint32
	Class  string // free, dirty, full, prefree, current
	Valid  uint32
	Victim bool // in the last op's victim section
	Marked bool // in victim_secmap
	// Mtime and Age: a candidate of the last call's search, with what cost-benefit weighs ("" for
	// other segments, and for greedy, which weighs valid blocks only).
	Mtime, Age string
}

// gcCellTitle is a cell's tooltip.
func gcCellTitle(c GCCell) string {
	t := "segment " + itoa(c.Segno) + ": " + c.Class + ", " + itoa(c.Valid) + " valid"
	if c.Mtime != "" {
		t += ", mean mtime " + c.Mtime + ", age " + c.Age
	}
	if c.Victim {
		t += " · the victim"
	}
	if c.Marked {
		t += " · marked by a background call"
	}
	return t
}

// gcCellClass gives a cell its class, the victim and the background marks (static/css/app.css).
func gcCellClass(c GCCell) string {
	s := "gc-cell gc-" + c.Class
	if c.Victim {
		s += " gc-victim"
	} else if c.Marked {
		s += " gc-marked"
	}
	return s
}

func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
