package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import jetstream.config.SettingCatalog;
import jetstream.testing.ConfigMappings;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link IngesterConfig} reads only settings declared in {@link SettingCatalog}, with their declared types and defaults. */
@Tag("unit")
class IngesterConfigDeclarationTest {
    @Test
    void everySettingIsDeclaredWithItsDefault() {
        assertEquals(List.of(), ConfigMappings.problems(IngesterConfig.class, SettingCatalog.Service.INGESTER));
    }
}
