package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * atproto datetime: the intersection of RFC 3339 and ISO 8601 that the data model allows.
 * {@code YYYY-MM-DDThh:mm:ss[.fraction](Z|+hh:mm|-hh:mm)}, uppercase {@code T} and {@code Z}, at
 * least one fraction digit when the dot is present, {@code -00:00} refused, at most 64 chars; and
 * it must name a real instant: month, day (leap years included), hour, minute and second in range,
 * and not before year 0 once the offset is applied.
 */
public final class Datetime {
    public static final int MAX_LENGTH = 64;

    private static final int[] DAYS_IN_MONTH = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    private Datetime() {}

    public static boolean isValid(CharSequence s) {
        int len = s.length();
        if (len < 20 || len > MAX_LENGTH
                || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T'
                || s.charAt(13) != ':' || s.charAt(16) != ':') {
            return false;
        }
        int century = Ascii.twoDigits(s, 0);
        int yy = Ascii.twoDigits(s, 2);
        int month = Ascii.twoDigits(s, 5);
        int day = Ascii.twoDigits(s, 8);
        int hour = Ascii.twoDigits(s, 11);
        int minute = Ascii.twoDigits(s, 14);
        int second = Ascii.twoDigits(s, 17);
        if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1
                || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
            return false;
        }
        int year = century * 100 + yy;
        if (day > daysInMonth(year, month)) {
            return false;
        }
        int i = 19;
        if (s.charAt(i) == '.') {
            int digits = ++i;
            while (i < len && Ascii.isDigit(s.charAt(i))) {
                i++;
            }
            if (i == digits || i == len) {
                return false;
            }
        }
        char zone = s.charAt(i);
        if (zone == 'Z') {
            return i + 1 == len;
        }
        if ((zone != '+' && zone != '-') || i + 6 != len || s.charAt(i + 3) != ':') {
            return false;
        }
        int offHour = Ascii.twoDigits(s, i + 1);
        int offMinute = Ascii.twoDigits(s, i + 4);
        if (offHour < 0 || offHour > 23 || offMinute < 0 || offMinute > 59) {
            return false;
        }
        int offset = offHour * 60 + offMinute;
        if (zone == '-') {
            // "-00:00" means "offset unknown" in RFC 3339 and is not ISO 8601.
            return offset != 0;
        }
        // A positive offset moves the instant earlier; on 0000-01-01 it can fall before year 0.
        return year != 0 || month != 1 || day != 1 || hour * 60 + minute >= offset;
    }

    /** @throws DecodeException reason {@code invalid_datetime} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_datetime", "invalid datetime " + Ascii.quote(s));
        }
    }

    private static int daysInMonth(int year, int month) {
        if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) {
            return 29;
        }
        return DAYS_IN_MONTH[month - 1];
    }
}
