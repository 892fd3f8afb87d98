package recorder

// MergedKey exposes mergedKeys to the external tests.
func MergedKey(k string) bool { return mergedKeys[k] }
