package request

import "strings"

// Form is one operation of the ops language as a form to fill: its kind and its words in order,
// read from the grammar [ParseOp] states in its error messages (opForms), so an operation added
// there reaches every client that builds ops lines from forms (the player's "next operation")
// with no change of theirs.
type Form struct {
	Kind string `json:"kind"`
	Line string `json:"line"` // the form as written: "zero PATH OFFSET LENGTH [keep_size]"
	Args []Arg  `json:"args"`
}

// Arg is one word of a form after the kind: a placeholder (PATH, OFFSET, LENGTH, N: upper case),
// a keyword that must be written as is (keep_size), or one of several keywords (ipu_policy or
// reserved_blocks); Optional ones may be left out ([keep_size]).
type Arg struct {
	// Name is the placeholder ("PATH", "OFFSET", "LENGTH", "N"), or "" for a keyword.
	Name string `json:"name,omitempty"`
	// Words are a keyword's spellings: one for a fixed word, several for a choice.
	Words    []string `json:"words,omitempty"`
	Optional bool     `json:"optional,omitempty"`
}

// Forms lists the operations of the ops language, in the order the grammar gives them.
func Forms() []Form {
	var out []Form
	for _, line := range strings.Split(opForms, ",") {
		w := strings.Fields(line)
		if len(w) == 0 {
			continue
		}
		f := Form{Kind: w[0], Line: strings.Join(w, " "), Args: []Arg{}}
		for _, x := range w[1:] {
			var a Arg
			if strings.HasPrefix(x, "[") && strings.HasSuffix(x, "]") {
				a.Optional, x = true, x[1:len(x)-1]
			}
			if x == strings.ToUpper(x) {
				a.Name = x
			} else {
				a.Words = strings.Split(x, "|")
			}
			f.Args = append(f.Args, a)
		}
		out = append(out, f)
	}
	return out
}
