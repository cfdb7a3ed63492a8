"""Pure, NumPy-vectorised agreement statistics (no Django import).

Every statistic is a ``Stat``: a finite value (optionally with a CI) or undefined with a
reason; NaN is used only inside the vectorised ``*_values`` functions and never returned from
a Stat-returning function. Labels are arbitrary hashables in an explicit order; None = missing.
"""

from .agreement import (
    NO_ITEMS,
    SINGLE_LABEL,
    cohen_kappa,
    cohen_kappa_values,
    confusion_matrix,
    disagreement_weights,
    expected_agreement,
    expected_agreement_values,
    fleiss_kappa,
    fleiss_kappa_from_ratings,
    gwet_ac1,
    gwet_ac1_from_ratings,
    gwet_ac1_multi,
    gwet_ac1_values,
    observed_agreement,
    observed_agreement_values,
    rating_counts,
)
from .bootstrap import (
    BootstrapResult,
    PairedBootstrapResult,
    bootstrap_items,
    bootstrap_paired,
    bootstrap_table,
    cohen_kappa_ci,
    gwet_ac1_ci,
)
from .calibration import CalibrationReport, ReliabilityBin, expected_calibration_error
from .classification import (
    AveragedScores,
    ClassificationReport,
    ClassScores,
    accuracy,
    accuracy_values,
    classification_report,
    macro_f1_values,
    per_class_values,
    precision_recall_f1,
)
from .reliability import krippendorff_alpha
from .stat import Stat
from .voting import (
    PanelVote,
    group_vote,
    majority_vote,
    panel_vote,
    position_swap_consistency,
    unanimous_vote,
)

__all__ = [
    "NO_ITEMS",
    "SINGLE_LABEL",
    "AveragedScores",
    "BootstrapResult",
    "CalibrationReport",
    "ClassScores",
    "ClassificationReport",
    "PanelVote",
    "ReliabilityBin",
    "Stat",
    "accuracy",
    "accuracy_values",
    "bootstrap_items",
    "bootstrap_paired",
    "PairedBootstrapResult",
    "bootstrap_table",
    "classification_report",
    "cohen_kappa",
    "cohen_kappa_ci",
    "cohen_kappa_values",
    "confusion_matrix",
    "disagreement_weights",
    "expected_agreement",
    "expected_agreement_values",
    "expected_calibration_error",
    "fleiss_kappa",
    "fleiss_kappa_from_ratings",
    "group_vote",
    "gwet_ac1",
    "gwet_ac1_ci",
    "gwet_ac1_from_ratings",
    "gwet_ac1_multi",
    "gwet_ac1_values",
    "krippendorff_alpha",
    "macro_f1_values",
    "majority_vote",
    "observed_agreement",
    "observed_agreement_values",
    "panel_vote",
    "per_class_values",
    "position_swap_consistency",
    "precision_recall_f1",
    "rating_counts",
    "unanimous_vote",
]
