package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The RocksDB jar the ingester ships carries the native library of both node platforms (x86_64 and arm64). */
@Tag("unit")
class RocksDbPlatformsTest {
    @Test
    void nativeLibrariesOfBothLinuxPlatformsAreOnTheClasspath() {
        ClassLoader cl = org.rocksdb.RocksDB.class.getClassLoader();
        for (String lib : new String[] {"librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so"}) {
            assertNotNull(cl.getResource(lib), lib + " is missing: the image would not run on that platform");
        }
    }
}
