package survey

import "fmt"

// The seed's measurement (the patch's own figure): zeroing 64 MiB, 16,384 blocks, took 16.436 ms
// with 16,384 f2fs_invalidate_blocks calls (per-block) and 10.011 ms with 19 (batched).
const (
	seedBlocks       = 16384
	seedCallsPer     = 16384
	seedCallsBatched = 19
	seedMsPer        = 16.436
	seedMsBatched    = 10.011
)

// Costs are the per-call and per-block costs a survey's estimated times use:
// time = calls × PerCallMicros + blocks × PerBlockMicros.
type Costs struct {
	PerCallMicros  float64 `json:"perCallMicros"`
	PerBlockMicros float64 `json:"perBlockMicros"`
	Source         string  `json:"source"`
}

// DefaultCosts solves the seed's two measurements for the two costs: the same 16,384 blocks, so the
// 6.425 ms difference is 16,365 calls (≈0.393 µs each) and the rest is per block (≈0.611 µs).
func DefaultCosts() Costs {
	perCall := (seedMsPer - seedMsBatched) * 1000 / (seedCallsPer - seedCallsBatched)
	perBlock := (seedMsBatched*1000 - seedCallsBatched*perCall) / seedBlocks
	return Costs{PerCallMicros: perCall, PerBlockMicros: perBlock, Source: fmt.Sprintf(
		"an estimate from the seed's measurement: %d blocks zeroed with %d f2fs_invalidate_blocks calls in %.3f ms "+
			"and with %d calls in %.3f ms, so %.3f µs per call and %.3f µs per block",
		seedBlocks, seedCallsPer, seedMsPer, seedCallsBatched, seedMsBatched, perCall, perBlock)}
}

// Ms is the estimated time of calls invalidating blocks, in milliseconds.
func (c Costs) Ms(calls, blocks uint64) float64 {
	return (float64(calls)*c.PerCallMicros + float64(blocks)*c.PerBlockMicros) / 1000
}

// SetCosts recomputes the estimated times with c.
func (s *Survey) SetCosts(c Costs) {
	s.Costs = c
	for _, t := range []*Totals{&s.Totals, &s.Plain, &s.Compressed} {
		t.estimate(c)
	}
}
