package core

import (
	"bufio"
	"io"
	"strconv"
)

// CallsCSVHeader is the header line of [WriteCallsCSV]'s table.
const CallsCSVHeader = "mode,index,start,len"

// WriteCallsCSV writes the calls of each result as CSV, for a spreadsheet or a plot: the header
// [CallsCSVHeader], then a row per f2fs_invalidate_blocks(start, len) call, mode by mode in the
// order given, index counting each mode's calls from 1 as the player's call log does ("call 1 takes
// the SIT lock"). The calls are expanded as they are written, so a per-block run of millions of
// calls is streamed, never held as text.
func WriteCallsCSV(w io.Writer, results ...*Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(CallsCSVHeader + "\n")
	var line []byte
	for _, res := range results {
		mode := res.Mode.String()
		var i uint64
		for c := range res.Calls.All() {
			i++
			line = append(line[:0], mode...)
			line = append(line, ',')
			line = strconv.AppendUint(line, i, 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, uint64(c.Start), 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, uint64(c.Len), 10)
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
