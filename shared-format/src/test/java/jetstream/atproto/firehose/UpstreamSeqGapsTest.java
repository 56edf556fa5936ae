package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class UpstreamSeqGapsTest {

    @Test
    void countsSkippedSeqsAndStepsBackwards() {
        UpstreamSeqGaps gaps = new UpstreamSeqGaps();
        assertEquals(0, gaps.observe(100));
        assertEquals(0, gaps.observe(101));
        assertEquals(3, gaps.observe(105));
        assertEquals(0, gaps.observe(105));
        assertEquals(0, gaps.observe(90));
        assertEquals(0, gaps.observe(91));
        assertEquals(3, gaps.missed());
        assertEquals(2, gaps.regressions());
        assertEquals(91, gaps.last());
    }

    @Test
    void relayCorpusGapsAccountForEverySeqNotCaptured() throws IOException {
        // The corpus keeps only v1-visible events of a longer capture, so it has holes but no regressions.
        List<byte[]> frames = RelayCorpusConversionTest.frames();
        FrameDecoder decoder = new FrameDecoder();
        UpstreamSeqGaps gaps = new UpstreamSeqGaps();
        long first = -1;
        for (byte[] f : frames) {
            long seq = decoder.decode(f).seq();
            first = first < 0 ? seq : first;
            gaps.observe(seq);
        }
        assertEquals(91, frames.size());
        assertEquals(0, gaps.regressions());
        assertEquals(gaps.last() - first + 1 - frames.size(), gaps.missed());
    }
}
