package request

// Form is one operation of the ops language as a form to fill: its kind and its words in order,
// read from its declaration in [Ops], so an operation added there reaches every client that builds
// ops lines from forms (the player's "next operation") with no change of theirs.
type Form struct {
	Kind string `json:"kind"`
	Line string `json:"line"` // the form as written: "zero PATH OFFSET LENGTH [keep_size]"
	Args []Arg  `json:"args"`
}

// Arg is one word of a form after the kind: a placeholder (PATH, OFFSET, LENGTH, N: upper case),
// a keyword that must be written as is (keep_size), or one of several keywords (ipu_policy or
// reserved_blocks; 1 or 0); Optional ones may be left out ([keep_size]).
type Arg struct {
	// Name is the placeholder ("PATH", "OFFSET", "LENGTH", "N"), or "" for a keyword.
	Name string `json:"name,omitempty"`
	// Words are a keyword's spellings: one for a fixed word, several for a choice.
	Words    []string `json:"words,omitempty"`
	Optional bool     `json:"optional,omitempty"`
}
