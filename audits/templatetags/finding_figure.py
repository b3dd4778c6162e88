"""`{% finding_figure finding findings tutor_name %}`: a finding's inline SVG (`audits.finding_figures`).

It is drawn where the findings block is rendered (results page and HTML report), so the JSON of the findings carries
no markup."""

from django import template
from django.utils.safestring import mark_safe

from audits.finding_figures import finding_figure_svg

register = template.Library()


@register.simple_tag
def finding_figure(finding, findings, tutor_name: str = "") -> str:
    svg = finding_figure_svg(
        finding, threshold=float(findings["threshold"]), ci_label=str(findings["ci_label"]), tutor_name=tutor_name
    )
    return mark_safe(svg)  # noqa: S308 - built by audits.change_plot, every text escaped
