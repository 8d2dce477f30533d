// Package survey answers "what would batching save on this device?" for a whole image (issue 39):
// for every regular file it runs the engine (core, through source) for a zero of the whole file, a
// punch of it and a truncate to 0, in both modes, and sums where the saving is — the run-length
// distribution of the volume, the saving by directory, the top files, the files where batching
// saves nothing, compressed files apart — with an estimated time from a stated per-call and
// per-block cost.
//
// It counts nothing itself: every number of a row is a field of the [core.Result] the engine
// returns for that operation, the same walk `zrviz run --json` prints (a test holds the two equal for
// every file of kernel-written images). What a sequence ([core.Seq]) adds after the walk on a
// freshly mounted image — the segment manager's log moves and f2fs_balance_fs — is checked per
// row, and a row where it could change the answer is run through a fresh [core.Seq] exactly as
// `zrviz run` does (see [Run]).
//
// The package knows nothing of HTTP: the CLI (zrviz survey) and the web page (web/survey.go) both
// call [Run] and encode its [Survey].
package survey
