package sdk

import "time"

// RFC3339Millis is the UTC time ms milliseconds after 1970 in RFC 3339
// with milliseconds, exactly as
// time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"):
// "2024-05-01T12:34:56.789Z". RFC3339Seconds is the time s seconds after
// 1970 as time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z").
//
// Written out digit by digit rather than through time.Format, which
// parses its layout on every call: inside a TinyGo plugin that parse was
// 12-19% of the guest's time in the plugins that date every line (kimi,
// opencode). A year outside 0-9999, which RFC 3339 cannot write in four
// digits, goes through time.Format as before.
func RFC3339Millis(ms int64) string {
	sec, milli := floorDiv(ms, 1000)
	var b [24]byte
	if !civil(b[:19], sec) {
		return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	b[19] = '.'
	digits(b[20:23], milli)
	b[23] = 'Z'
	return string(b[:])
}

// RFC3339Seconds: see RFC3339Millis.
func RFC3339Seconds(s int64) string {
	var b [20]byte
	if !civil(b[:19], s) {
		return time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z")
	}
	b[19] = 'Z'
	return string(b[:])
}

// civil writes "YYYY-MM-DDTHH:MM:SS" of the UTC time sec seconds after
// 1970 into b (19 bytes), or reports false when the year is outside
// 0-9999. The date is Howard Hinnant's days_from_civil inverse
// (proleptic Gregorian, as package time).
func civil(b []byte, sec int64) bool {
	days, sod := floorDiv(sec, 86400)
	// Years 0 and 9999 end 719528 days before and 2932896 days after
	// 1970-01-01: beyond them no arithmetic below can overflow either.
	if days < -719528 || days > 2932896 {
		return false
	}
	z := days + 719468 // days since 0000-03-01
	era, doe := floorDiv(z, 146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
		y++
	}
	if y < 0 || y > 9999 {
		return false
	}
	digits(b[0:4], y)
	b[4] = '-'
	digits(b[5:7], m)
	b[7] = '-'
	digits(b[8:10], d)
	b[10] = 'T'
	digits(b[11:13], sod/3600)
	b[13] = ':'
	digits(b[14:16], sod/60%60)
	b[16] = ':'
	digits(b[17:19], sod%60)
	return true
}

// floorDiv returns a/b rounded down and the remainder in [0, b) (b > 0).
func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// digits writes v (0 <= v < 10^len(b)) in len(b) decimal digits.
func digits(b []byte, v int64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
}
