// Types for parse-prometheus-text-format (it ships none): Prometheus text exposition to metric families.
declare module "parse-prometheus-text-format" {
  interface Sample {
    value?: string;
    labels?: Record<string, string>;
  }
  interface MetricFamily {
    name: string;
    help: string;
    type: string;
    metrics: Sample[];
  }
  export default function parse(text: string): MetricFamily[];
}
