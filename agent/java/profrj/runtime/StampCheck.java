package profrj.runtime;

import java.lang.invoke.MethodHandle;

/**
 * memory mode: checks, once per JVM, that the agent finds stamps where this JVM's heap census
 * reports them. The agent gives {@link Base} a stamp field when it defines it, as it would an
 * application's class; {@link Sub} inherits it, and both see interface constants, whose fields
 * count in the field numbers the census reports. Other int fields hold other values, so a wrong
 * field number reads a wrong value.
 */
final class StampCheck {
    interface Consts {
        int A = 1;
        long B = 2L;
    }

    static class Base implements Consts {
        int x;
        long y;
    }

    static final class Sub extends Base {
        int z;
        Object w;
    }

    static final int BASE = 0x5A17;
    static final int SUB = 0x5A18;

    /** null if the census finds both stamps, else what went wrong. */
    static String run() {
        Base b = new Base();
        Sub s = new Sub();
        Object mb = StampSetter.OF.get(Base.class);
        Object ms = StampSetter.OF.get(Sub.class);
        if (mb == StampSetter.NONE || ms == StampSetter.NONE) {
            return "no stamp field found on the check's classes";
        }
        b.x = BASE + 2;
        s.x = SUB + 2;
        s.z = SUB + 3;
        Stamps.put((MethodHandle) mb, b, BASE);
        Stamps.put((MethodHandle) ms, s, SUB);
        return Probe.stampCheck(b, s, BASE, SUB);
    }
}
