package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/player"
	"github.com/zrviz/zrviz/source"
)

// TestRunOpResolves (issue 28): a run query's op reaches everything a player and the run API
// resolve: a zero and a punch of the same range are different outlines (the cache key), the hello's
// info names the call, and the run API answers the played call with core.Simulate's calls (a
// truncate's size as its offset).
func TestRunOpResolves(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	ctx := context.Background()
	q := func(extra url.Values) url.Values {
		v := url.Values{"image": {"demo"}, "path": {"/cases/contiguous.bin"}, "offset": {"0"}, "length": {"1MiB"}}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	zero, err := ts.resolveRun(ctx, q(nil))
	if err != nil {
		t.Fatal(err)
	}
	punch, err := ts.resolveRun(ctx, q(url.Values{"op": {"punch"}}))
	if err != nil {
		t.Fatal(err)
	}
	if zero.key() == punch.key() {
		t.Errorf("a zero and a punch of the same range share the outline key %q", zero.key())
	}
	if zero.info.Op != "zero" || punch.info.Op != "punch" || punch.spec.Request.Op != core.OpPunch {
		t.Errorf("info ops %q, %q; punch request %v", zero.info.Op, punch.info.Op, punch.spec.Request.Op)
	}

	for _, c := range []struct {
		query string
		req   core.Request
		path  string
	}{
		{"path=/cases/indirect.bin&op=truncate&size=1MiB", core.Request{Op: core.OpTruncate, Offset: 1 << 20}, "/cases/indirect.bin"},
		{"path=/cases/holes.bin&op=punch&offset=0&length=8MiB", core.Request{Op: core.OpPunch, Length: 8 << 20}, "/cases/holes.bin"},
		// /cases keeps inline dentries: the unlink is played.
		{"path=/cases/indirect.bin&op=unlink", core.Request{Op: core.OpUnlink, DentryInline: true}, "/cases/indirect.bin"},
	} {
		res, err := http.Get(ts.ts.URL + "/api/images/demo/run?" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Op      string `json:"op"`
			Offset  int64  `json:"offset"`
			Results []struct {
				Mode  string `json:"mode"`
				Stats struct {
					Calls      uint64 `json:"calls"`
					NodesFreed uint64 `json:"nodesFreed"`
				} `json:"stats"`
			} `json:"results"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %d %v", c.query, res.StatusCode, err)
		}
		want := map[core.Op]string{core.OpPunch: "punch", core.OpTruncate: "truncate", core.OpUnlink: "unlink"}[c.req.Op]
		if body.Op != want || body.Offset != c.req.Offset || len(body.Results) != 2 {
			t.Fatalf("%s: op %q offset %d, %d results", c.query, body.Op, body.Offset, len(body.Results))
		}
		si, err := ts.image(DemoID)
		if err != nil {
			t.Fatal(err)
		}
		f, err := si.Image.Resolve(c.path)
		if err != nil {
			t.Fatal(err)
		}
		in, err := source.FileInput(si.Image, f)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range []core.Mode{core.PerBlock, core.Batched} {
			sim, err := core.Simulate(in, c.req, m)
			if err != nil {
				t.Fatal(err)
			}
			if got := body.Results[i]; got.Mode != m.String() || got.Stats.Calls != sim.Stats.Calls || got.Stats.NodesFreed != sim.Stats.NodesFreed {
				t.Errorf("%s %s: the API's %+v, core.Simulate's %d calls, %d nodes freed", c.query, m, got, sim.Stats.Calls, sim.Stats.NodesFreed)
			}
		}
	}
}

// TestSandboxPunch: a sandbox list that maps block 5,005 twice, punched: the per-block loop skips
// the repeat (its SIT bit is clear), the batched loop validates it while its first copy is still
// pending and frees it twice; the tour stops at both. A truncate of a synthetic file is refused.
func TestSandboxPunch(t *testing.T) {
	tg, err := resolveSandbox("5000-5019 5005 5020-5059", "both", "punch")
	if err != nil {
		t.Fatal(err)
	}
	zero, err := resolveSandbox("5000-5019 5005 5020-5059", "both", "")
	if err != nil {
		t.Fatal(err)
	}
	if tg.info.Op != "punch" || tg.spec.Request.Op != core.OpPunch || zero.spec.Request.Op != core.OpZero || tg.key() == zero.key() {
		t.Fatalf("ops %q %v, zero %v; keys equal %v", tg.info.Op, tg.spec.Request.Op, zero.spec.Request.Op, tg.key() == zero.key())
	}
	o, err := player.Build(context.Background(), tg.spec)
	if err != nil {
		t.Fatal(err)
	}
	if pb, bt := o.Final[0].Stats, o.Final[1].Stats; pb.SlotsSkipped != 1 || bt.WronglyCleared != 1 {
		t.Errorf("per-block skipped %d, batched wrongly cleared %d; want 1 and 1", pb.SlotsSkipped, bt.WronglyCleared)
	}
	kinds := map[string]bool{}
	for _, s := range o.Stops {
		kinds[s.Kind] = true
	}
	if !kinds[player.StopValidatedFirst] || !kinds[player.StopFreedTwice] {
		t.Errorf("stops %v", kinds)
	}
	if _, err := resolveSandbox("5000-5019", "both", "truncate"); err == nil {
		t.Error("a sandbox truncate is not refused")
	}
}
