package podium

// Plausibility bounds (issue 9, section 3): a board's key may declare the
// smallest and largest value a submission may carry for it, so that an
// impossible result (a 3-millisecond expert game, a negative time) is
// refused at the door instead of topping the board.
//
// Bounds apply to what a client submits: on a sum board to the amount
// added, not to the running total. Aggregate boards compute their values
// from their sources and points boards are written by settlement only, so
// neither takes bounds: put them on the source boards.

// CheckBounds reports the first of keys (one value per key of b, in
// order) that lies outside its key's bounds, as an ECodeUnprocessable error
// naming the key and the bound.
func (b *Board) CheckBounds(keys []int64) error {
	for i, k := range b.Keys {
		if i >= len(keys) {
			break
		}
		if k.Min != nil && keys[i] < *k.Min {
			return Errorf(ECodeUnprocessable, "key %q must be >= %d; %d given", k.Name, *k.Min, keys[i])
		}
		if k.Max != nil && keys[i] > *k.Max {
			return Errorf(ECodeUnprocessable, "key %q must be <= %d; %d given", k.Name, *k.Max, keys[i])
		}
	}
	return nil
}

// HasBounds reports whether any key of b declares a bound.
func (b *Board) HasBounds() bool {
	for _, k := range b.Keys {
		if k.Min != nil || k.Max != nil {
			return true
		}
	}
	return false
}

// normalizeLimits checks the bounds and the quota of a board: min <= max
// (a malformed definition: 400, like every other field check), and
// neither on a board that submissions do not write (422).
func (b *Board) normalizeLimits() error {
	for i, k := range b.Keys {
		if k.Min != nil && k.Max != nil && *k.Min > *k.Max {
			return Errorf(ECodeInvalid, "keys[%d] (%q): min %d is greater than max %d", i, k.Name, *k.Min, *k.Max)
		}
	}
	derived := ""
	switch {
	case b.Aggregate != nil || b.Mode == AggregateMode:
		derived = "an aggregate board: its values are computed from its sources, so put bounds and quotas on the source boards"
	case b.Points != nil:
		derived = "a points board: only tournament settlement writes it"
	}
	if derived != "" && b.HasBounds() {
		return Errorf(ECodeUnprocessable, "board %q is %s; its keys take no min or max", b.ID, derived)
	}
	if derived != "" && b.Quota != nil {
		return Errorf(ECodeUnprocessable, "board %q is %s; it takes no quota", b.ID, derived)
	}
	return b.Quota.normalize()
}
