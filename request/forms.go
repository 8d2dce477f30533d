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
// reserved_blocks; 1 or 0); Optional ones may be left out ([keep_size]).
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
		if f := parseForm(line); f.Kind != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseForm reads one form of the grammar: "zero PATH OFFSET LENGTH [keep_size]".
func parseForm(line string) Form {
	w := strings.Fields(line)
	if len(w) == 0 {
		return Form{}
	}
	f := Form{Kind: w[0], Line: strings.Join(w, " "), Args: []Arg{}}
	for _, x := range w[1:] {
		var a Arg
		if strings.HasPrefix(x, "[") && strings.HasSuffix(x, "]") {
			a.Optional, x = true, x[1:len(x)-1]
		}
		if isPlaceholder(x) {
			a.Name = x
		} else {
			a.Words = strings.Split(x, "|") // a choice ("gc 1|0"), or one fixed word
		}
		f.Args = append(f.Args, a)
	}
	return f
}

// isPlaceholder reports whether a word of a form stands for a value: upper-case letters and
// underscores (PATH, OFFSET, N, SECONDS); keywords are lower case or digits.
func isPlaceholder(w string) bool {
	for _, r := range w {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return w != ""
}
