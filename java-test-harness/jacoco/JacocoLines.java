import java.io.File;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.tools.ExecFileLoader;

/**
 * Prints JaCoCo's verdict on every line with code: `class line covered|missed cb mb ci mi`
 * (partly covered counts as covered; cb and mb the line's covered and missed branches, ci and mi
 * its covered and missed instructions). Arguments: the jacoco.exec file, the directory of class files analysed.
 * Compiled and run by tests/coverage_jacoco.rs with Debian's libjacoco-java on the class path.
 */
public class JacocoLines {
    public static void main(String[] args) throws Exception {
        ExecFileLoader exec = new ExecFileLoader();
        exec.load(new File(args[0]));
        CoverageBuilder builder = new CoverageBuilder();
        new Analyzer(exec.getExecutionDataStore(), builder).analyzeAll(new File(args[1]));
        for (IClassCoverage c : builder.getClasses()) {
            for (int line = c.getFirstLine(); line <= c.getLastLine() && line > 0; line++) {
                int status = c.getLine(line).getStatus();
                if (status == ICounter.EMPTY) {
                    continue;
                }
                String verdict = status == ICounter.NOT_COVERED ? "missed" : "covered";
                ICounter b = c.getLine(line).getBranchCounter();
                ICounter i = c.getLine(line).getInstructionCounter();
                System.out.println(
                        c.getName().replace('/', '.')
                                + " "
                                + line
                                + " "
                                + verdict
                                + " "
                                + b.getCoveredCount()
                                + " "
                                + b.getMissedCount()
                                + " "
                                + i.getCoveredCount()
                                + " "
                                + i.getMissedCount());
            }
        }
    }
}
