package web

import (
	"reflect"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/request"
)

// pageContract is what the page's modules share with the server, sent once: every page carries it
// as JSON (templates.Layout's Contract, <script type="application/json" id="zrviz-contract">), and
// static/js/contract.js is the one module that reads it. So no JS file restates a mode name, a log
// type, a segment class, a special address, the segment formula or the run query's field names;
// each comes from the Go constant that defines it. TestContract holds the page's copy, and the
// node tests' (static/jstest/testdata/contract.json), to this value.
type pageContract struct {
	Modes contractModes `json:"modes"`
	// LogTypes names the six logs by number, as the SIT entry's type and the segments API's "type"
	// count them (gc.HotData … gc.ColdNode, the kernel's CURSEG_*).
	LogTypes [gc.NumLogs]string `json:"logTypes"`
	// SegmentClasses are the segment manager's lists a segment is in (core.SegClass), by role.
	SegmentClasses contractClasses `json:"segmentClasses"`
	// ClassLetters names each class by the letter gc's timeline sends for it (gc.ClassFree …).
	ClassLetters map[string]string `json:"classLetters"`
	Addr         contractAddrs     `json:"addr"`
	Segment      contractSegment   `json:"segment"`
	Query        contractQuery     `json:"query"`
	// Ops names the calls a player plays by kind, as the query's op field and the ops language
	// spell them (request.Playable): ops.zero is "zero".
	Ops map[string]string `json:"ops"`
	// Played is each call a player plays, its declaration's Played facet (request.Playable), in
	// the registry's order: the browser's modules build its ops line, its query and its form
	// from it, so a new playable op reaches them with no JS change.
	Played []contractPlayed `json:"played"`
	// Transport is how the player reaches the server: "websocket", or "worker" in the static site,
	// where the server runs in the page's service worker (web/transport.go, static/js/ws.js).
	Transport string `json:"transport"`
}

// The page contract's transports.
const (
	transportWebsocket = "websocket"
	transportWorker    = "worker"
)

// contractPlayed is one played call as the page's modules read it (request.Played).
type contractPlayed struct {
	Kind  string `json:"kind"`  // the query's op and the ops line's first word
	Label string `json:"label"` // the pages' words ("punch hole")
	// Range is the range rule: "offset-length" (OFFSET LENGTH), "size" (SIZE) or "file" (the
	// whole file: no words, no fields).
	Range string `json:"range"`
	// Fields are the query fields it reads besides path and mode, in the order of its words.
	Fields    []string `json:"fields"`
	KeepSize  bool     `json:"keepSize"`  // keep_size is a choice
	KeepsSize bool     `json:"keepsSize"` // i_size never changes (FALLOC_FL_KEEP_SIZE always)
	// FreesNodes: it frees node blocks (the nodes-freed count is shown).
	FreesNodes bool `json:"freesNodes"`
	// Skips: it skips addresses that are not valid (the addresses-skipped count is shown).
	Skips    bool   `json:"skips"`
	PerDnode string `json:"perDnode"` // the kernel function it runs once per dnode chunk
	Compare  bool   `json:"compare"`  // a side of the compare page
	Sandbox  bool   `json:"sandbox"`  // the sandbox plays it
}

// contractPlayable is every played call of the registry, for the contract.
func contractPlayable() (map[string]string, []contractPlayed) {
	ops := map[string]string{}
	var out []contractPlayed
	for _, s := range request.Playable() {
		p := s.Played
		ops[s.Kind] = s.Kind
		out = append(out, contractPlayed{Kind: s.Kind, Label: p.Label, Range: p.Range.String(), Fields: p.Fields(),
			KeepSize: p.KeepSize, KeepsSize: p.KeepsSize, FreesNodes: p.FreesNodes, Skips: p.Skips, PerDnode: p.PerDnode,
			Compare: p.Compare, Sandbox: p.Sandbox})
	}
	return ops, out
}

// contractModes are the engines' names: the order the protocol sends them in (core.Modes), and
// each by role, for the code that treats one of them specially.
type contractModes struct {
	Order    []string `json:"order"`
	PerBlock string   `json:"perBlock"`
	Batched  string   `json:"batched"`
	Both     string   `json:"both"` // the query's name for both modes (request.ModesName)
}

// contractClasses are core.SegClass's names, in core's order.
type contractClasses struct {
	Free    string `json:"free"`
	Dirty   string `json:"dirty"`
	Full    string `json:"full"`
	Prefree string `json:"prefree"`
	Current string `json:"current"`
}

// contractAddrs are the slot values that are not block addresses (f2fs.h).
type contractAddrs struct {
	Null     uint32 `json:"null"`
	New      uint32 `json:"new"`
	Compress uint32 `json:"compress"`
}

// contractSegment is the segment number formula as the page applies it to the hello's geometry:
// segno = ⌊(addr − geometry[base]) / geometry[perSegment]⌋, the block's offset in its segment the
// remainder (core's segnoOf, GET_SEGNO). The fields are named, not the numbers sent, because the
// geometry is each image's.
type contractSegment struct {
	Base       string `json:"base"`
	PerSegment string `json:"perSegment"`
}

// contractQuery are the run query's field names (request.Field*, FieldBefore), which
// static/js/links.js's setRunQuery writes.
type contractQuery struct {
	Path     string `json:"path"`
	Offset   string `json:"offset"`
	Length   string `json:"length"`
	KeepSize string `json:"keepSize"`
	Mode     string `json:"mode"`
	Before   string `json:"before"`
	Op       string `json:"op"`   // the played call's kind (absent: a zero)
	Size     string `json:"size"` // a size rule's field (truncate's new size)
}

// logTypeNames names the logs in the pages' words, by gc's log number.
func logTypeNames() [gc.NumLogs]string {
	var n [gc.NumLogs]string
	n[gc.HotData], n[gc.WarmData], n[gc.ColdData] = "hot data", "warm data", "cold data"
	n[gc.HotNode], n[gc.WarmNode], n[gc.ColdNode] = "hot node", "warm node", "cold node"
	return n
}

// newPageContract builds the contract from the constants it names.
func newPageContract() pageContract {
	c := pageContract{
		Modes: contractModes{
			PerBlock: core.PerBlock.String(),
			Batched:  core.Batched.String(),
			Both:     request.ModesName(request.Both()),
		},
		LogTypes: logTypeNames(),
		SegmentClasses: contractClasses{Free: core.SegFree.String(), Dirty: core.SegDirty.String(), Full: core.SegFull.String(),
			Prefree: core.SegPrefree.String(), Current: core.SegCurrent.String()},
		ClassLetters: map[string]string{},
		Addr:         contractAddrs{Null: core.NullAddr, New: core.NewAddr, Compress: core.CompressAddr},
		Segment:      contractSegment{Base: geometryField("MainBlkaddr"), PerSegment: geometryField("BlocksPerSeg")},
		Query: contractQuery{Path: request.FieldPath, Offset: request.FieldOffset, Length: request.FieldLength,
			KeepSize: request.FieldKeepSize, Mode: request.FieldMode, Before: FieldBefore,
			Op: request.FieldOp, Size: request.FieldSize},
		Transport: transportWebsocket,
	}
	c.Ops, c.Played = contractPlayable()
	for _, m := range core.Modes {
		c.Modes.Order = append(c.Modes.Order, m.String())
	}
	for _, k := range segmentClassLetters() {
		c.ClassLetters[string(k.letter)] = k.class.String()
	}
	return c
}

// classLetter is a segment class and the letter gc's timeline sends for it.
type classLetter struct {
	class  core.SegClass
	letter byte
}

// segmentClassLetters pairs core's segment classes, in core's order, with gc's letters: the one
// place the two are paired (the contract, the next-state API's counts and the GC page's use it).
func segmentClassLetters() []classLetter {
	return []classLetter{{core.SegFree, gc.ClassFree}, {core.SegDirty, gc.ClassDirty}, {core.SegFull, gc.ClassFull},
		{core.SegPrefree, gc.ClassPrefree}, {core.SegCurrent, gc.ClassCurrent}}
}

// geometryField is the JSON name of the hello's geometry field name ("" when there is none, which
// TestContract refuses), so a rename in Go renames it in the contract too.
func geometryField(name string) string {
	f, ok := reflect.TypeFor[geometry]().FieldByName(name)
	if !ok {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return tag
}
