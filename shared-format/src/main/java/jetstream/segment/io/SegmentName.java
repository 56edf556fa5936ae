package jetstream.segment.io;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Segment file names: {@code seg_} + the index in lowercase base 36, zero-padded to 10 characters,
 * + {@code .jss}. Padding makes lexicographic order equal numeric (= creation = seq) order.
 */
public final class SegmentName {
    public static final String PREFIX = "seg_";
    public static final String SUFFIX = ".jss";
    private static final int DIGITS = 10;
    /** 36^10 - 1: the largest index that fits in ten base-36 digits. */
    public static final long MAX_INDEX = 3_656_158_440_062_975L;

    private SegmentName() {}

    /** One segment file found by a directory scan. */
    public record Entry(long index, Path path) {}

    public static String format(long index) {
        if (index < 0 || index > MAX_INDEX) {
            throw new IllegalArgumentException("segment index out of range: " + index);
        }
        String digits = Long.toString(index, 36);
        return PREFIX + "0".repeat(DIGITS - digits.length()) + digits + SUFFIX;
    }

    /**
     * The index named by {@code name}, or -1 when it is not a segment name. Strict: the name must
     * re-format to itself, so uppercase digits, signs and wrong lengths are rejected.
     */
    public static long parse(String name) {
        if (name.length() != PREFIX.length() + DIGITS + SUFFIX.length()
                || !name.startsWith(PREFIX) || !name.endsWith(SUFFIX)) {
            return -1;
        }
        long index = 0;
        for (int i = PREFIX.length(); i < PREFIX.length() + DIGITS; i++) {
            char c = name.charAt(i);
            int d;
            if (c >= '0' && c <= '9') {
                d = c - '0';
            } else if (c >= 'a' && c <= 'z') {
                d = c - 'a' + 10;
            } else {
                return -1;
            }
            index = index * 36 + d;
        }
        return index;
    }

    /**
     * Every segment file directly in {@code dir}, ascending by index. Other names and
     * subdirectories are ignored; a missing directory holds no segments.
     */
    public static List<Entry> scan(Path dir) throws IOException {
        List<Entry> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path p : stream) {
                long index = parse(p.getFileName().toString());
                if (index >= 0 && Files.isRegularFile(p)) {
                    out.add(new Entry(index, p));
                }
            }
        }
        out.sort((a, b) -> Long.compare(a.index, b.index));
        return out;
    }
}
