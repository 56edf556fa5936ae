package jetstream.bench;

import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Pairs a JMH benchmark with the floor it is reported against: {@link Jmh} prints
 * {@code RESULT <metric> value=<this score> floor=<the floor's score> ratio=<value / floor>} when both ran
 * (same mode and parameters). Without it, a benchmark pairs with its class's only floor (a {@code floor*}
 * method or one a {@link Floor} names), if the class has exactly one; repeat it to report one benchmark
 * against several floors.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Repeatable(Floor.All.class)
public @interface Floor {
    /** The floor benchmark's method name, in the same class. */
    String value();

    /** The metric name; empty: derived from the class, method, parameters and score unit (see {@link Jmh}). */
    String metric() default "";

    /** The container of a repeated {@link Floor}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface All {
        Floor[] value();
    }
}
