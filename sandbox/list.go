package sandbox

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zrviz/zrviz/core"
)

// Bounds on a slot list. Parse refuses input past them with a [*SyntaxError] that says which bound.
const (
	// MaxInput is the longest slot-list text, in bytes.
	MaxInput = 1 << 20
	// MaxTokens is the most tokens a list may have.
	MaxTokens = 100_000
	// MaxBoundaries is the most `|` a list may have (each may add up to 1017 NEW padding slots).
	MaxBoundaries = 10_000
	// MaxSlots is the most slots a list may hold, counting ranges and repeats expanded.
	MaxSlots = 10_000_000
	// MaxPermalink is the longest canonical list ([List.String]) a permalink carries in its URL
	// (?slots=...). Escaped it is at most three times as long, far below the server's 1 MiB header
	// limit and browsers' URL limits; a longer list can still be run, but not shared as a link.
	MaxPermalink = 8 << 10
)

// Kind is what a run of slots holds.
type Kind uint8

// Slot kinds.
const (
	Addr Kind = iota // block addresses Addr, Addr+1, …
	New              // NEW_ADDR
	Null             // NULL_ADDR
)

// Run is a stretch of a list's slots: N consecutive addresses from Addr (kind [Addr]), or N
// NEW or NULL slots.
type Run struct {
	Kind Kind
	Addr uint32 // first address ([Addr] runs only)
	N    uint32
}

// List is a parsed slot list, held as runs. It is immutable: every method may be called from
// several goroutines.
type List struct {
	runs   []Run
	groups []group
	slots  uint64
	count  [3]uint64 // slots by kind
}

// group is the runs of one `|`-separated group.
type group struct {
	first int    // index of its first run
	slots uint64 // slots in it
}

// SyntaxError is a slot list Parse cannot read. Pos is the byte offset of the token in the input
// (0-based), Index its number (1-based; 0 when the error is about the whole input), Token the token
// itself (cut to 40 bytes).
type SyntaxError struct {
	Pos   int
	Index int
	Token string
	Msg   string
}

func (e *SyntaxError) Error() string {
	if e.Index == 0 {
		return fmt.Sprintf("sandbox: at byte %d: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("sandbox: token %d %q at byte %d: %s", e.Index, e.Token, e.Pos, e.Msg)
}

const grammar = "want an address (7200), a range (7200-7263), NEW, NULL, NEW*K, NULL*K or |"

// Parse reads a slot list (see the package documentation for the language).
func Parse(s string) (*List, error) {
	if len(s) > MaxInput {
		return nil, &SyntaxError{Pos: MaxInput, Msg: fmt.Sprintf("the list is %d bytes, longer than %d (MaxInput)", len(s), MaxInput)}
	}
	b := &builder{l: &List{groups: []group{{}}}}
	idx, lastPos, lastTok := 0, 0, ""
	for pos := 0; pos < len(s); {
		if isSpace(s[pos]) {
			pos++
			continue
		}
		end := pos
		for end < len(s) && !isSpace(s[end]) {
			end++
		}
		tok := s[pos:end]
		idx++
		fail := func(format string, args ...any) error {
			return &SyntaxError{Pos: pos, Index: idx, Token: cut(tok), Msg: fmt.Sprintf(format, args...)}
		}
		if idx > MaxTokens {
			return nil, fail("more than %d tokens (MaxTokens): write contiguous addresses as one range A-B", MaxTokens)
		}
		if err := b.token(tok, fail); err != nil {
			return nil, err
		}
		lastPos, lastTok = pos, tok
		pos = end
	}
	l := b.l
	switch {
	case idx == 0:
		return nil, &SyntaxError{Pos: 0, Msg: "empty list: " + grammar}
	case lastTok == "|":
		return nil, &SyntaxError{Pos: lastPos, Index: idx, Token: lastTok, Msg: "| at the end: a dnode boundary needs a slot after it"}
	}
	return l, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// cut shortens a token for an error message, on a rune boundary.
func cut(tok string) string {
	if len(tok) <= 40 {
		return tok
	}
	n := 40
	for n > 0 && !utf8.RuneStart(tok[n]) {
		n--
	}
	return tok[:n] + "…"
}

// builder appends runs to a list, merging as it goes.
type builder struct{ l *List }

func (b *builder) token(tok string, fail func(string, ...any) error) error {
	l := b.l
	if tok == "|" {
		g := &l.groups[len(l.groups)-1]
		switch {
		case g.slots == 0 && len(l.groups) == 1:
			return fail("a list cannot start with |: the range starts at the first slot")
		case g.slots == 0:
			return fail("two | in a row: a dnode group needs at least one slot")
		case len(l.groups) > MaxBoundaries:
			return fail("more than %d | (MaxBoundaries)", MaxBoundaries)
		}
		l.groups = append(l.groups, group{first: len(l.runs)})
		return nil
	}
	if strings.Contains(tok, "|") {
		return fail("put spaces around | (it is a token of its own)")
	}
	if word, count, ok := strings.Cut(tok, "*"); ok {
		k, err := special(word)
		if err != nil {
			if _, _, e := parseAddrs(word); e == nil {
				return fail("only NEW and NULL repeat with *K; an address is one block (list it again to repeat it)")
			}
			return fail("%q before * is not NEW or NULL", word)
		}
		n, err := strconv.ParseUint(count, 10, 64)
		switch {
		case err != nil && count == "":
			return fail("missing repeat count after *")
		case err != nil && isDigits(count):
			return fail("repeat count %s is more than %d slots (MaxSlots)", count, MaxSlots)
		case err != nil:
			return fail("repeat count %q is not a decimal number", count)
		case n == 0:
			return fail("repeat count must be at least 1")
		case n > MaxSlots:
			return fail("repeat count %d is more than %d slots (MaxSlots)", n, MaxSlots)
		}
		return b.add(Run{Kind: k, N: uint32(n)}, fail)
	}
	if k, err := special(tok); err == nil {
		return b.add(Run{Kind: k, N: 1}, fail)
	}
	lo, hi, err := parseAddrs(tok)
	if err != nil {
		return fail("%s", err.Error())
	}
	if uint64(hi)-uint64(lo)+1 > MaxSlots {
		return fail("range of %d addresses is more than %d slots (MaxSlots)", uint64(hi)-uint64(lo)+1, MaxSlots)
	}
	return b.add(Run{Kind: Addr, Addr: lo, N: hi - lo + 1}, fail)
}

// add appends r, merging it into the previous run of the same group when it continues it.
func (b *builder) add(r Run, fail func(string, ...any) error) error {
	l := b.l
	if l.slots+uint64(r.N) > MaxSlots {
		return fail("the list would hold more than %d slots (MaxSlots)", MaxSlots)
	}
	l.slots += uint64(r.N)
	l.count[r.Kind] += uint64(r.N)
	g := &l.groups[len(l.groups)-1]
	g.slots += uint64(r.N)
	if k := len(l.runs) - 1; k >= g.first && k >= 0 {
		p := &l.runs[k]
		if p.Kind == r.Kind && (r.Kind != Addr || uint64(p.Addr)+uint64(p.N) == uint64(r.Addr)) {
			p.N += r.N
			return nil
		}
	}
	l.runs = append(l.runs, r)
	return nil
}

func special(w string) (Kind, error) {
	switch {
	case strings.EqualFold(w, "NEW"):
		return New, nil
	case strings.EqualFold(w, "NULL"):
		return Null, nil
	}
	return 0, fmt.Errorf("not NEW or NULL")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Largest block address the language accepts: 0xFFFFFFFE and 0xFFFFFFFF are COMPRESS_ADDR and NEW_ADDR
// (uint64: the generators add run lengths to addresses without overflow).
const maxAddr = uint64(core.CompressAddr) - 1

// parseAddrs reads "A" or "A-B".
func parseAddrs(tok string) (lo, hi uint32, err error) {
	a, b, isRange := strings.Cut(tok, "-")
	if isRange && (a == "" || b == "") {
		if a == "" && isDigits(b) {
			return 0, 0, fmt.Errorf("addresses are not negative")
		}
		return 0, 0, fmt.Errorf("a range needs two addresses, A-B")
	}
	x, err := parseAddr(a)
	if err != nil {
		return 0, 0, err
	}
	if !isRange {
		return x, x, nil
	}
	y, err := parseAddr(b)
	if err != nil {
		return 0, 0, err
	}
	if y < x {
		return 0, 0, fmt.Errorf("range runs backwards (%d > %d): list descending addresses one by one", x, y)
	}
	return x, y, nil
}

func parseAddr(s string) (uint32, error) {
	if !isDigits(s) {
		if strings.Contains(s, "*") || strings.Contains(s, "-") {
			return 0, fmt.Errorf("%s", grammar)
		}
		return 0, fmt.Errorf("%q is not a slot: %s", s, grammar)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	switch {
	case err != nil || v > math.MaxUint32:
		return 0, fmt.Errorf("%s is larger than any 32-bit block address", s)
	case v == 0:
		return 0, fmt.Errorf("0 is NULL_ADDR: write NULL for a hole")
	case v == uint64(core.NewAddr):
		return 0, fmt.Errorf("4294967295 is NEW_ADDR (0xFFFFFFFF): write NEW")
	case v == uint64(core.CompressAddr):
		return 0, fmt.Errorf("4294967294 is COMPRESS_ADDR (0xFFFFFFFE), a compressed-cluster marker, not a block")
	}
	return uint32(v), nil
}

// Len returns the number of slots in the list.
func (l *List) Len() uint64 { return l.slots }

// Count returns how many slots of kind k the list holds.
func (l *List) Count(k Kind) uint64 {
	if int(k) >= len(l.count) {
		return 0
	}
	return l.count[k]
}

// Slot returns list slot k (0-based) as a slot value: an address, core's NewAddr or NullAddr; ok is
// false past the end.
func (l *List) Slot(k uint64) (v uint32, ok bool) {
	for _, r := range l.runs {
		if k < uint64(r.N) {
			switch r.Kind {
			case Addr:
				return r.Addr + uint32(k), true
			case New:
				return core.NewAddr, true
			}
			return 0, true
		}
		k -= uint64(r.N)
	}
	return 0, false
}

// String returns the canonical form of the list, which [Parse] reads back to the same slots:
// contiguous addresses as one range, repeats as NEW*K / NULL*K, groups joined by " | ". Permalinks
// carry this form.
func (l *List) String() string {
	var sb strings.Builder
	for gi, g := range l.groups {
		if gi > 0 {
			sb.WriteString(" |")
		}
		end := len(l.runs)
		if gi+1 < len(l.groups) {
			end = l.groups[gi+1].first
		}
		for i, r := range l.runs[g.first:end] {
			if gi > 0 || i > 0 {
				sb.WriteByte(' ')
			}
			writeRun(&sb, r)
		}
	}
	return sb.String()
}

func writeRun(sb *strings.Builder, r Run) {
	switch r.Kind {
	case Addr:
		sb.WriteString(strconv.FormatUint(uint64(r.Addr), 10))
		if r.N > 1 {
			sb.WriteByte('-')
			sb.WriteString(strconv.FormatUint(uint64(r.Addr)+uint64(r.N)-1, 10))
		}
		return
	case New:
		sb.WriteString("NEW")
	default:
		sb.WriteString("NULL")
	}
	if r.N > 1 {
		sb.WriteByte('*')
		sb.WriteString(strconv.FormatUint(uint64(r.N), 10))
	}
}

// Permalinkable reports whether the canonical list is short enough ([MaxPermalink]) to travel in a
// URL.
func (l *List) Permalinkable() bool { return len(l.String()) <= MaxPermalink }
