import java.io.File;
import java.io.FileOutputStream;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.tools.ExecFileLoader;
import org.jacoco.report.IReportVisitor;
import org.jacoco.report.xml.XMLFormatter;

/**
 * Writes JaCoCo's own XML report of a jacoco.exec file over the class files given. Arguments:
 * the exec file, the report to write, then class files (or directories) to analyse. Compiled and
 * run by tests/coverage_jacoco_xml.rs with Debian's libjacoco-java on the class path.
 */
public class JacocoReport {
    public static void main(String[] args) throws Exception {
        ExecFileLoader exec = new ExecFileLoader();
        exec.load(new File(args[0]));
        CoverageBuilder builder = new CoverageBuilder();
        Analyzer analyzer = new Analyzer(exec.getExecutionDataStore(), builder);
        for (int i = 2; i < args.length; i++) {
            analyzer.analyzeAll(new File(args[i]));
        }
        try (FileOutputStream out = new FileOutputStream(args[1])) {
            IReportVisitor visitor = new XMLFormatter().createVisitor(out);
            visitor.visitInfo(exec.getSessionInfoStore().getInfos(), exec.getExecutionDataStore().getContents());
            visitor.visitBundle(builder.getBundle("jacoco"), null);
            visitor.visitEnd();
        }
    }
}
