// Package glossary holds the terms zrviz explains: each a plain definition, the on-disk value or
// structure, and the kernel function or field it comes from. The /glossary page lists them and the
// player shows the same entries in popovers wherever a term appears (its legends, panel titles,
// narration, counters and the tour's stops, which name their terms by slug).
//
// The entries are plain data returned fresh by [All], so no caller can change another's copy.
package glossary
