package templates

// SandboxExample is one generator button of the sandbox page.
type SandboxExample struct {
	Name   string // "contiguous", …
	Label  string // button text
	Lesson string // what it shows
	Slots  string // the list it fills the text box with
}

// SandboxPage is the data of the sandbox page (GET /sandbox).
type SandboxPage struct {
	Layout
	Slots        string // the text box's initial list (?slots=), "" for none
	Placeholder  string // the language's example
	Examples     []SandboxExample
	MaxPermalink int // longest canonical list a permalink carries, in bytes
	MaxInput     int // longest list the server reads, in bytes
	MaxSlots     int
	MainBlkaddr  uint32
}

// ExerciseQuestion is one question of the exercise page.
type ExerciseQuestion struct {
	Text   string
	Answer string
	// Given is the student's answer, as typed, when the page checks answers; Checked says the
	// server read it, Right whether it is the engine's answer, Hint why it could not be read.
	Given   string
	Checked bool
	Right   bool
	Hint    string
}

// ExerciseImage is an image the exercise page offers for kind file.
type ExerciseImage struct {
	ID, Name string
}

// ExercisePage is the data of the exercise page (GET /exercise).
type ExercisePage struct {
	Layout
	Seed      uint64
	Kind      string // "slots" or "file"
	ImageID   string // kind file
	ImageName string
	Images    []ExerciseImage
	Slots     string // kind slots
	Path      string // kind file
	Offset    int64
	Length    int64
	Questions []ExerciseQuestion
	PlayerURL string // the player on this problem
	// SandboxURL is the sandbox page with the list (kind slots).
	SandboxURL string
	NextURL    string // the next seed
	// Rules describes the sandbox's volume (kind slots).
	Rules string
	// Score is "2 of 3 right" when the page checks answers (?answer=…), else "".
	Score string
}

// verdictAttr is an answer's data-right: "true", "false", "" when it was not read (an empty or
// unreadable answer).
func verdictAttr(q ExerciseQuestion) string {
	switch {
	case !q.Checked:
		return ""
	case q.Right:
		return "true"
	}
	return "false"
}

// verdictText says what the server made of an answer: right, wrong (the answer stays hidden until
// revealed: the student may try again) or why it could not be read.
func verdictText(q ExerciseQuestion) string {
	switch {
	case q.Hint != "":
		return q.Hint
	case !q.Checked:
		return ""
	case q.Right:
		return "✓ right"
	}
	return "✗ not " + q.Given + ": try again, or reveal the answer"
}
