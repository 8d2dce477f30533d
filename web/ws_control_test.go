package web

import (
	"testing"

	"github.com/zrviz/zrviz/request"
)

func TestDecodeControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want control
		bad  bool
	}{
		{in: `{"type":"play"}`, want: control{Type: "play"}},
		{in: `{"type":"pause"}`, want: control{Type: "pause"}},
		{in: `{"type":"step"}`, want: control{Type: "step", N: 1}},
		{in: `{"type":"step","n":-3}`, want: control{Type: "step", N: -3}},
		{in: `{"type":"seek","step":42}`, want: control{Type: "seek", Step: 42}},
		{in: `{"type":"speed","stepsPerSecond":100}`, want: control{Type: "speed", Speed: 100}},
		{in: `{"type":"speed","stepsPerSecond":1e12}`, want: control{Type: "speed", Speed: maxSpeed}},
		{in: `{"type":"speed","stepsPerSecond":0.001}`, want: control{Type: "speed", Speed: minSpeed}},
		{in: `{"type":"pace","pace":"30"}`, want: control{Type: "pace", Pace: "30"}},
		{in: `{"type":"pace","pace":"step"}`, want: control{Type: "pace", Pace: "step"}},
		{in: `{"type":"pace","pace":"31"}`, bad: true},
		{in: `{"type":"pace"}`, bad: true},
		{in: `{"type":"gotoSlot","slot":873}`, want: control{Type: "gotoSlot", Slot: 873}},
		{in: `{"type":"gotoSlot","slot":-1}`, bad: true},
		{in: `{"type":"initial","from":4096}`, want: control{Type: "initial", Slot: 4096}},
		{in: `{"type":"initial"}`, bad: true},
		{in: `{"type":"answer","stop":3,"answer":"19"}`, want: control{Type: "answer", Stop: 3, Answer: "19"}},
		{in: `{"type":"answer","stop":3}`, bad: true},
		{in: `{"type":"answer","answer":"x"}`, bad: true},
		{in: `{"type":"mode","mode":"both"}`, want: control{Type: "mode", Mode: "both"}},
		{in: `{"type":"mode","mode":"batched"}`, want: control{Type: "mode", Mode: "batched"}},
		{in: `{"type":"nextCall"}`, want: control{Type: "nextCall"}},
		{in: `{"type":"nextFlush"}`, bad: true},
		{in: `{"type":"end","extra":1}`, want: control{Type: "end"}},
		{in: `{"type":"reset"}`, want: control{Type: "reset"}},
		{in: ``, bad: true},
		{in: `[]`, bad: true},
		{in: `{}`, bad: true},
		{in: `{"type":"jump"}`, bad: true},
		{in: `{"type":"step","n":1.5}`, bad: true},
		{in: `{"type":"step","n":"1"}`, want: control{Type: "step", N: 1}},
		{in: `{"type":"seek"}`, bad: true},
		{in: `{"type":"seek","step":-1}`, bad: true},
		{in: `{"type":"seek","step":99999999999999999999}`, bad: true},
		{in: `{"type":"speed"}`, bad: true},
		{in: `{"type":"speed","stepsPerSecond":0}`, bad: true},
		{in: `{"type":"speed","stepsPerSecond":-5}`, bad: true},
		{in: `{"type":"mode","mode":"sideways"}`, bad: true},
		{in: `{"type":"mode"}`, bad: true},
		{in: `{"type":"play"} {"type":"pause"}`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := decodeControl([]byte(tt.in))
			if tt.bad {
				if ErrorCode(err) != EINVALID {
					t.Fatalf("decodeControl(%s) = %+v, %v; want an EINVALID *Error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("decodeControl(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDecodeControlTooLarge(t *testing.T) {
	t.Parallel()
	b := make([]byte, maxControlSize+1)
	for i := range b {
		b[i] = ' '
	}
	copy(b, `{"type":"play"}`)
	if _, err := decodeControl(b); ErrorCode(err) != EINVALID {
		t.Fatalf("oversized message: err = %v, want an EINVALID *Error", err)
	}
}

// FuzzControlMessage checks that the decoder never panics and that whatever
// it accepts is a well-formed control.
func FuzzControlMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"play"}`, `{"type":"step","n":-1}`, `{"type":"seek","step":100}`,
		`{"type":"speed","stepsPerSecond":2.5}`, `{"type":"mode","mode":"per-block"}`,
		`{"type":"nextCall"}`, `{"type":"pace","pace":"60"}`, `{"type":"answer","stop":1,"answer":"no"}`, `{"type":"initial","from":0}`, `{"type":"end"}`, `{"type":"reset"}`, `{"type":"pause"}`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeControl(b)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error %v is not an EINVALID *Error", err)
			}
			return
		}
		switch c.Type {
		case ctlPlay, ctlPause, ctlNextCall, ctlEnd, ctlReset, ctlStep, ctlGotoSlot, ctlInitial:
		case ctlSeek:
			if c.Step < 0 {
				t.Fatalf("seek to %d accepted", c.Step)
			}
		case ctlSpeed:
			if !(c.Speed >= minSpeed && c.Speed <= maxSpeed) {
				t.Fatalf("speed %v accepted", c.Speed)
			}
		case ctlMode:
			if _, err := request.ParseModes(c.Mode); err != nil {
				t.Fatalf("mode %q accepted: %v", c.Mode, err)
			}
		case ctlPace:
			if _, ok := findPace(c.Pace); !ok {
				t.Fatalf("pace %q accepted", c.Pace)
			}
		case ctlAnswer:
			if c.Stop < 0 || len(c.Answer) > 200 {
				t.Fatalf("answer %+v accepted", c)
			}
		default:
			t.Fatalf("type %q accepted", c.Type)
		}
	})
}
