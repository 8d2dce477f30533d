package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/player"
	"github.com/zrviz/zrviz/request"
)

// The player's websocket protocol (docs/protocol.md): message types on the wire. Engine values are
// core's and player's own types; only the envelopes live here.

// Protocol constants.
const (
	protocolVersion = 2
	maxControlSize  = 4096      // bytes of one client message
	maxBadControls  = 100       // malformed messages before the socket is closed
	minSpeed        = 0.05      // steps per second
	maxSpeed        = 1_000_000 // steps per second
	// defaultPace is the pace a run plays at unless the client picks another: 30 s from start to
	// end, whatever its length.
	defaultPace = "30"
	// initialPage bounds the extents of one page of the initial slot map.
	initialPage = 16384
	// helloInitial bounds the extents of the initial map the hello itself carries.
	helloInitial = 4096
)

// pacePreset is a pace a client may pick (?pace= and the "pace" control): the run plays from start
// to end in Seconds, however long it is, or, for "step", one step a second. The run page's pace
// menu is rendered from [pacePresets] (templates.Pace), and static/js/pace.js reads the paces from
// that menu: this table is the one place they are written.
type pacePreset struct {
	Value   string
	Label   string  // the menu's words
	Seconds float64 // 0 for "step"
}

// pacePresets returns the paces in the menu's order, fastest first; [ and ] step through them in
// it.
func pacePresets() []pacePreset {
	return []pacePreset{
		{Value: "10", Label: "10 s", Seconds: 10},
		{Value: "30", Label: "30 s", Seconds: 30},
		{Value: "60", Label: "1 min", Seconds: 60},
		{Value: "180", Label: "3 min", Seconds: 180},
		{Value: "step", Label: "1 step/s"},
	}
}

// findPace returns the preset named v.
func findPace(v string) (pacePreset, bool) {
	for _, p := range pacePresets() {
		if p.Value == v {
			return p, true
		}
	}
	return pacePreset{}, false
}

// paceList names the paces for an error: "10", "30", … or "step".
func paceList() string {
	var b strings.Builder
	ps := pacePresets()
	for i, p := range ps {
		switch {
		case i == len(ps)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(p.Value))
	}
	return b.String()
}

// Control types a client may send.
const (
	ctlPlay     = "play"
	ctlPause    = "pause"
	ctlStep     = "step"
	ctlSeek     = "seek"
	ctlSpeed    = "speed"
	ctlPace     = "pace"
	ctlMode     = "mode"
	ctlNextCall = "nextCall"
	ctlEnd      = "end"
	ctlReset    = "reset"
	ctlGotoSlot = "gotoSlot"
	ctlInitial  = "initial"
	ctlAnswer   = "answer"
	ctlRoom     = "room"   // presenter: start a room
	ctlUI       = "ui"     // presenter: the open stop and quiz, mirrored on followers
	ctlReveal   = "reveal" // presenter: give the followers the verdict on a question
)

// control is one decoded client message. Only the fields its Type uses are meaningful.
type control struct {
	Type   string
	N      int64   // step: how many (negative = back)
	Step   int64   // seek: target
	Speed  float64 // speed: steps per second, already clamped
	Pace   string  // pace: "10", "30", "60", "180" or "step"
	Mode   string  // mode: "per-block", "batched" or "both"
	Slot   uint64  // gotoSlot, initial: a file block index
	Stop   int     // answer, reveal: the tour stop's index
	Answer string  // answer: what the student said
	UI     roomUI  // ui
}

// wireControl is the JSON of a client message. Numbers are decoded as json.Number so a huge or
// fractional step count is refused rather than silently rounded.
type wireControl struct {
	Type           string       `json:"type"`
	N              *json.Number `json:"n"`
	Step           *json.Number `json:"step"`
	StepsPerSecond *json.Number `json:"stepsPerSecond"`
	Pace           *string      `json:"pace"`
	Mode           *string      `json:"mode"`
	Slot           *json.Number `json:"slot"`
	From           *json.Number `json:"from"`
	Stop           *json.Number `json:"stop"`
	Answer         *string      `json:"answer"`
	Quiz           *bool        `json:"quiz"`
	Question       *json.Number `json:"question"`
}

// decodeControl parses and validates one client message. Every returned control is well formed: a
// known type with the fields it needs, integral counts and a finite speed within [minSpeed,
// maxSpeed].
func decodeControl(b []byte) (control, error) {
	if len(b) > maxControlSize {
		return control{}, controlError(fmt.Sprintf("message of %d bytes (limit %d)", len(b), maxControlSize))
	}
	var wc wireControl
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&wc); err != nil {
		return control{}, controlError("not a JSON object: " + err.Error())
	}
	if dec.More() {
		return control{}, controlError("trailing data after the JSON object")
	}
	c := control{Type: wc.Type}
	var err error
	switch wc.Type {
	case ctlPlay, ctlPause, ctlNextCall, ctlEnd, ctlReset:
	case ctlStep:
		c.N = 1
		if wc.N != nil {
			if c.N, err = wc.N.Int64(); err != nil {
				return control{}, controlError(fmt.Sprintf("step: n %q is not an integer", wc.N.String()))
			}
		}
	case ctlSeek:
		if c.Step, err = nonNegative(ctlSeek, "step", wc.Step); err != nil {
			return control{}, err
		}
	case ctlSpeed:
		if wc.StepsPerSecond == nil {
			return control{}, controlError("speed: missing stepsPerSecond")
		}
		f, err := wc.StepsPerSecond.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return control{}, controlError(fmt.Sprintf("speed: stepsPerSecond %q is not a positive number", wc.StepsPerSecond.String()))
		}
		c.Speed = min(max(f, minSpeed), maxSpeed)
	case ctlPace:
		known := false
		if wc.Pace != nil {
			_, known = findPace(*wc.Pace)
		}
		if !known {
			return control{}, controlError("pace: want " + paceList() + " (seconds from start to end, or one step a second)")
		}
		c.Pace = *wc.Pace
	case ctlMode:
		if wc.Mode == nil {
			return control{}, controlError("mode: missing mode")
		}
		if _, err := request.ParseModes(*wc.Mode); err != nil {
			return control{}, controlError(err.Error())
		}
		c.Mode = *wc.Mode
	case ctlGotoSlot, ctlInitial:
		field := wc.Slot
		name := "slot"
		if wc.Type == ctlInitial {
			field, name = wc.From, "from"
		}
		n, err := nonNegative(wc.Type, name, field)
		if err != nil {
			return control{}, err
		}
		c.Slot = uint64(n)
	case ctlRoom:
	case ctlUI:
		c.UI = roomUI{Stop: -1, Question: -1}
		for _, f := range []struct {
			name string
			v    *json.Number
			dst  *int
		}{{"stop", wc.Stop, &c.UI.Stop}, {"question", wc.Question, &c.UI.Question}} {
			if f.v == nil {
				continue
			}
			n, err := f.v.Int64()
			if err != nil || n < -1 || n > math.MaxInt32 {
				return control{}, controlError(fmt.Sprintf("ui: %s %q is not a stop index or -1", f.name, f.v.String()))
			}
			*f.dst = int(n)
		}
		c.UI.Quiz = wc.Quiz != nil && *wc.Quiz
	case ctlReveal:
		n, err := nonNegative(ctlReveal, "stop", wc.Stop)
		if err != nil || n > math.MaxInt32 {
			return control{}, controlError("reveal: want a stop index")
		}
		c.Stop = int(n)
	case ctlAnswer:
		n, err := nonNegative(ctlAnswer, "stop", wc.Stop)
		if err != nil || n > math.MaxInt32 {
			return control{}, controlError("answer: want a stop index")
		}
		if wc.Answer == nil || len(*wc.Answer) > 200 {
			return control{}, controlError("answer: missing answer (at most 200 bytes)")
		}
		c.Stop, c.Answer = int(n), *wc.Answer
	case "":
		return control{}, controlError("missing type")
	default:
		return control{}, controlError(fmt.Sprintf("unknown type %q", wc.Type))
	}
	return c, nil
}

func nonNegative(typ, field string, v *json.Number) (int64, error) {
	if v == nil {
		return 0, controlError(fmt.Sprintf("%s: missing %s", typ, field))
	}
	n, err := v.Int64()
	if err != nil || n < 0 {
		return 0, controlError(fmt.Sprintf("%s: %s %q is not a non-negative integer", typ, field, v.String()))
	}
	return n, nil
}

// runInfo says which run a hello is about. Byte counts are decimal strings: a JavaScript number
// would round an offset such as 2^63−1.
type runInfo struct {
	// Op is the played call by its ops-language name: "zero", "punch" or "truncate" (request.RunOp);
	// a truncate's new size is Offset, as in core.Request.
	Op       string   `json:"op"`
	Image    string   `json:"image"`
	Path     string   `json:"path"`
	Ino      uint32   `json:"ino"`
	Size     string   `json:"size"`
	Offset   string   `json:"offset"`
	Length   string   `json:"length"`
	KeepSize bool     `json:"keepSize"`
	Mode     string   `json:"mode"`
	Modes    []string `json:"modes"`
	Before   []string `json:"before"` // operations run first, in the ops language
	// Compressed and ClusterSize describe a compressed file (F2FS_COMPR_FL), which f2fs refuses
	// to zero; Algorithm names its compression ("lzo", "lz4", "zstd", "lzo-rle") when known.
	Compressed  bool   `json:"compressed,omitempty"`
	Algorithm   string `json:"algorithm,omitempty"`
	ClusterSize int    `json:"clusterSize,omitempty"`
	// Compression is the same in the pages' words (compressionNote), which the page shows as is.
	Compression string `json:"compression,omitempty"`
	Sandbox     string `json:"sandbox,omitempty"` // the slot list of a sandbox run
}

type geometry struct {
	BlockSize       uint32 `json:"blockSize"`
	BlocksPerSeg    uint32 `json:"blocksPerSeg"`
	Segment0Blkaddr uint32 `json:"segment0Blkaddr"`
	MainBlkaddr     uint32 `json:"mainBlkaddr"`
	MaxBlkaddr      uint32 `json:"maxBlkaddr"`
	SegsPerSec      uint32 `json:"segsPerSec"`
}

// initialPageMsg is a page of the slot map the run starts from.
type initialPageMsg struct {
	From    uint64        `json:"from"`
	Next    uint64        `json:"next"` // where the next page starts; range.end when this is the last
	Extents []core.Extent `json:"extents"`
}

// helloMsg is the first message of a connection, and follows every mode change.
type helloMsg struct {
	V              int                 `json:"v"`
	Type           string              `json:"type"`
	Run            runInfo             `json:"run"`
	TotalSteps     int64               `json:"totalSteps"`
	Step           int64               `json:"step"`
	Playing        bool                `json:"playing"`
	Pace           string              `json:"pace"`
	StepsPerSecond float64             `json:"stepsPerSecond"`
	TimeLeft       float64             `json:"timeLeft"`
	Geometry       geometry            `json:"geometry"`
	Range          player.Range        `json:"range"`
	Chunks         []player.Chunk      `json:"chunks"`
	Markers        []player.Marker     `json:"markers"`
	MarkersThinned bool                `json:"markersThinned"`
	Stops          []wireStop          `json:"stops"`
	Outcome        player.Outcome      `json:"outcome"`  // what the run returns, in the words the page shows
	Segments       []core.SegmentState `json:"segments"` // touched segments, as before the run
	SegTypes       map[string]int      `json:"segTypes"` // log type by segno
	Initial        initialPageMsg      `json:"initial"`
	Changed        []core.Extent       `json:"changed"`
	State          []player.ModeState  `json:"state"`
	Score          score               `json:"score"`
	Room           *roomInfo           `json:"room,omitempty"`   // when the view belongs to a room
	Trace          *traceInfo          `json:"trace,omitempty"`  // an attached kernel trace (&trace=)
	Kernel         *kernelCalls        `json:"kernel,omitempty"` // its calls beside the model's
	// Hold is where a quiz holds this view (web/quizhold.go): absent when nothing is withheld.
	Hold *quizHold `json:"hold,omitempty"`
}

// wireStop is a tour stop as a client sees it: a question comes without its answer, which the
// server checks (an answer the page could read would be no quiz).
type wireStop struct {
	player.Stop
	Question *wireQuestion `json:"question,omitempty"`
	// Withheld: the stop of a quiz's open question, sent as its question alone (web/quizhold.go).
	Withheld bool `json:"withheld,omitempty"`
}

type wireQuestion struct {
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Choices []string `json:"choices,omitempty"`
	Ask     int64    `json:"ask"`
	Reveal  int64    `json:"reveal"`
	// Withholds is what the page must not show while the question is open (player.Withholds).
	Withholds []string `json:"withholds"`
}

func wireStops(stops []player.Stop) []wireStop {
	out := make([]wireStop, len(stops))
	for i, s := range stops {
		out[i].Stop = s
		if q := s.Question; q != nil {
			out[i].Question = &wireQuestion{Kind: q.Kind, Text: q.Text, Choices: q.Choices, Ask: q.Ask, Reveal: q.Reveal, Withholds: q.Withholds}
		}
		out[i].Stop.Question = nil
	}
	return out
}

// score is a quiz's tally for one connection.
type score struct {
	Right int `json:"right"`
	Asked int `json:"asked"`
}

// wireEvent is one engine event in a frame: core's event plus the player step, the mode and the
// narration.
type wireEvent struct {
	core.Event
	Step       int64  `json:"step"` // player step (shadows the engine's)
	EngineStep int64  `json:"engineStep"`
	Mode       string `json:"mode"`
	Text       string `json:"text"`
	Message    string `json:"message,omitempty"`
}

func makeWireEvent(ev player.Event) wireEvent {
	return wireEvent{Event: ev.Event, Step: ev.PlayerStep, EngineStep: ev.Event.Step, Mode: ev.Mode.String(),
		Text: ev.Narrate(), Message: ev.Message()}
}

// frameMsg is a frame.
type frameMsg struct {
	V              int                `json:"v"`
	Type           string             `json:"type"`
	Step           int64              `json:"step"`
	Playing        bool               `json:"playing"`
	Pace           string             `json:"pace"`
	StepsPerSecond float64            `json:"stepsPerSecond"`
	TimeLeft       float64            `json:"timeLeft"`
	Full           bool               `json:"full"`
	Events         []wireEvent        `json:"events"`
	EventsDropped  int64              `json:"eventsDropped"`
	State          []player.ModeState `json:"state"`
	// Changed is what the run has written, as extents to lay over the initial map: in a full frame
	// everything (the client starts again from the initial map), else only the chunks this
	// frame's events touched.
	Changed []core.Extent `json:"changed"`
	// Kernel is the attached trace's calls beside the compared mode's latest calls.
	Kernel *kernelCalls `json:"kernel,omitempty"`
}

// initialMsg answers a client's request for a page of the initial map.
type initialMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	initialPageMsg
}

// quizMsg answers a quiz answer.
type quizMsg struct {
	V       int    `json:"v"`
	Type    string `json:"type"`
	Stop    int    `json:"stop"`
	Correct bool   `json:"correct"`
	Answer  string `json:"answer,omitempty"`  // the right answer (not while Pending)
	Pending bool   `json:"pending,omitempty"` // in a room: taken, the verdict comes with the presenter's reveal
	// Unanswered: a room's reveal to a follower who gave no answer (Correct is false, and the page
	// says "not answered", not "wrong").
	Unanswered bool  `json:"unanswered,omitempty"`
	Score      score `json:"score"`
}

// errorMsg is an error message to the client.
type errorMsg struct {
	V      int    `json:"v"`
	Type   string `json:"type"`
	Error  string `json:"error"`
	Status int    `json:"status,omitempty"` // the HTTP status the same error gets from the API
	Fatal  bool   `json:"fatal"`
}

func i64s(n int64) string { return strconv.FormatInt(n, 10) }
